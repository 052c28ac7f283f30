"""Payload locations (`locations`): the public URL a dynamic BR Code points to, by its
unguessable token, and the cob it serves while linked (`charge_id`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from pixgate.core.db.pool import Connection

_SELECT = """
    SELECT l.id, l.account_id, l.token, l.tipo_cob, l.charge_id, l.created_at, c.txid
    FROM locations l LEFT JOIN charges c ON c.id = l.charge_id
"""


@dataclass(frozen=True, slots=True)
class Location:
    """A location, with the txid of the cob it serves (None while unlinked)."""

    id: int
    account_id: int
    token: str
    tipo_cob: str
    charge_id: int | None
    created_at: datetime
    txid: str | None

    @classmethod
    def from_record(cls, r: asyncpg.Record | Mapping[str, Any]) -> Location:
        return cls(**{k: v for k, v in r.items() if k != "total"})


def _location_or_none(r: asyncpg.Record | None) -> Location | None:
    return None if r is None else Location.from_record(r)


async def insert(
    conn: Connection,
    *,
    account_id: int,
    token: str,
    tipo_cob: str,
    charge_id: int | None,
    created_at: datetime,
) -> Location:
    row = await conn.fetchrow(
        """
        WITH made AS (
            INSERT INTO locations (account_id, token, tipo_cob, charge_id, created_at)
            VALUES ($1, $2, $3, $4, $5)
            RETURNING *
        )
        SELECT made.id, made.account_id, made.token, made.tipo_cob, made.charge_id,
               made.created_at, c.txid
        FROM made LEFT JOIN charges c ON c.id = made.charge_id
        """,
        account_id,
        token,
        tipo_cob,
        charge_id,
        created_at,
    )
    assert row is not None
    return Location.from_record(row)


async def get(
    conn: Connection, account_id: int, location_id: int, *, lock: bool = False
) -> Location | None:
    """The account's location; `lock`: FOR NO KEY UPDATE of the location row."""
    query = _SELECT + " WHERE l.account_id = $1 AND l.id = $2"
    if lock:
        query += " FOR NO KEY UPDATE OF l"
    return _location_or_none(await conn.fetchrow(query, account_id, location_id))


async def of_charge(conn: Connection, charge_id: int) -> Location | None:
    """The location serving the charge now, if any."""
    return _location_or_none(await conn.fetchrow(_SELECT + " WHERE l.charge_id = $1", charge_id))


async def link(conn: Connection, location_id: int, charge_id: int) -> None:
    """The location serves the charge from now on."""
    await conn.execute("UPDATE locations SET charge_id = $2 WHERE id = $1", location_id, charge_id)


async def unlink(conn: Connection, location_id: int) -> None:
    """The location serves no charge any more (the charge keeps its status)."""
    await conn.execute("UPDATE locations SET charge_id = NULL WHERE id = $1", location_id)


@dataclass(frozen=True, slots=True)
class LocationFilter:
    """`GET /loc`: created in [inicio, fim], with or without a cob, of one tipoCob."""

    account_id: int
    start: datetime
    end: datetime
    linked: bool | None
    tipo_cob: str | None
    offset: int
    limit: int


_FILTER = """
    WHERE l.account_id = $1 AND l.created_at BETWEEN $2 AND $3
      AND ($4::boolean IS NULL OR (l.charge_id IS NOT NULL) = $4)
      AND ($5::text IS NULL OR l.tipo_cob = $5)
"""


async def page(conn: Connection, where: LocationFilter) -> tuple[list[Location], int]:
    """One page of the account's locations, oldest first, and how many match in all."""
    args = (where.account_id, where.start, where.end, where.linked, where.tipo_cob)
    rows = await conn.fetch(
        f"""
        SELECT l.id, l.account_id, l.token, l.tipo_cob, l.charge_id, l.created_at, c.txid,
               count(*) OVER () AS total
        FROM locations l LEFT JOIN charges c ON c.id = l.charge_id
        {_FILTER} ORDER BY l.created_at, l.id OFFSET $6 LIMIT $7
        """,  # noqa: S608 - built from this module's constants
        *args,
        where.offset,
        where.limit,
    )
    if rows:
        return [Location.from_record(r) for r in rows], int(rows[0]["total"])
    # past the last page no row carries the total
    total: int = await conn.fetchval(
        f"SELECT count(*) FROM locations l {_FILTER}",  # noqa: S608 - constants
        *args,
    )
    return [], total
