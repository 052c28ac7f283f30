"""Reading an account's transactions: the statement (4.6) and the by-key list (4.7).

Every query takes `account_id`: it is the one place tenancy is enforced for these lists.
Pages are newest first with `id` as the tie-break, so a fixed set pages without gaps
or repeats. The page is found on the covering index first and only its rows are
fetched whole (a deferred join), which keeps deep pages cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from pixgate.db.pool import Connection


@dataclass(frozen=True, slots=True)
class Filters:
    account_id: int
    start: datetime
    end: datetime
    status: str | None = None
    operation: str | None = None
    external_id: str | None = None
    end_to_end_id: str | None = None
    pix_key: str | None = None


_WHERE = """
    account_id = $1 AND created_at >= $2 AND created_at < $3
    AND ($4::text IS NULL OR status = $4)
    AND ($5::text IS NULL OR operation = $5)
    AND ($6::text IS NULL OR external_id = $6)
    AND ($7::text IS NULL OR end_to_end_id = $7)
    AND ($8::text IS NULL OR pix_key = $8)
"""


def _args(f: Filters) -> tuple[object, ...]:
    return (f.account_id, f.start, f.end, f.status, f.operation, f.external_id,
            f.end_to_end_id, f.pix_key)


async def page(conn: Connection, f: Filters, *, offset: int, limit: int) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"""
        SELECT t.* FROM (
            SELECT id FROM transactions WHERE {_WHERE}
            ORDER BY created_at DESC, id DESC
            OFFSET $9 LIMIT $10
        ) AS chosen
        JOIN transactions t ON t.id = chosen.id
        ORDER BY t.created_at DESC, t.id DESC
        """,  # noqa: S608 - the WHERE clause is a constant of this module
        *_args(f),
        offset,
        limit,
    )


async def count(conn: Connection, f: Filters, *, cap: int | None = None) -> int:
    """Rows matching the filters; with `cap`, counting stops there (the by-key list)."""
    total: int = await conn.fetchval(
        f"""
        SELECT count(*) FROM (
            SELECT 1 FROM transactions WHERE {_WHERE} LIMIT $9
        ) AS matching
        """,  # noqa: S608 - the WHERE clause is a constant of this module
        *_args(f),
        cap,
    )
    return total
