"""An account's charges, newest first, a page at a time (the dashboard's list of charges).

Scoped by `account_id`, the one place tenancy holds for this list. `id` breaks ties of
`created_at`, so a fixed set pages without gaps or repeats.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from pixgate.core.db.pool import Connection


@dataclass(frozen=True, slots=True)
class ListedCharge:
    """A charge as a list shows it; `transaction_id` is its payment's public id."""

    transaction_id: UUID
    kind: str
    status: str
    amount: int | None
    external_id: str | None
    description: str | None
    created_at: datetime
    expires_at: datetime
    paid_at: datetime | None


async def page(conn: Connection, account_id: int, *, offset: int, limit: int) -> list[ListedCharge]:
    rows = await conn.fetch(
        """
        SELECT t.transaction_id, c.kind, c.status, c.amount, t.external_id, t.description,
               c.created_at, c.expires_at, c.paid_at
        FROM charges c JOIN transactions t ON t.id = c.transaction_id
        WHERE c.account_id = $1
        ORDER BY c.created_at DESC, c.id DESC
        OFFSET $2 LIMIT $3
        """,
        account_id,
        offset,
        limit,
    )
    return [ListedCharge(*r.values()) for r in rows]


async def count(conn: Connection, account_id: int) -> int:
    total: int = await conn.fetchval(
        "SELECT count(*) FROM charges WHERE account_id = $1", account_id
    )
    return total
