"""`GET /cob`: an account's cobs by creation time, debtor, location and status, a page at a
time, with what each answer needs beside the charge (its location and payment)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pixgate.charges.queries.charges import Charge
from pixgate.charges.queries.locations import Location
from pixgate.core.db.pool import Connection
from pixgate.ledger.public import TRANSACTIONS_BY_IDS, Transaction

_FILTER = """
    FROM charges c
    WHERE c.account_id = $1 AND c.kind = 'cob' AND c.created_at BETWEEN $2 AND $3
      AND ($4::text IS NULL OR c.body -> 'devedor' ->> 'cpf' = $4)
      AND ($5::text IS NULL OR c.body -> 'devedor' ->> 'cnpj' = $5)
      AND ($6::boolean IS NULL
           OR EXISTS (SELECT 1 FROM locations l WHERE l.charge_id = c.id) = $6)
      AND ($7::text IS NULL
           OR CASE WHEN c.status = 'ATIVA' AND c.expires_at <= $8 THEN 'REMOVIDA_PELO_PSP'
                   ELSE c.status END = $7)
"""
"""The status filter is the status a reader sees (`service.expiry.status_at`): an ATIVA cob
past its expiration is REMOVIDA_PELO_PSP before its expiry job ran."""


@dataclass(frozen=True, slots=True)
class CobFilter:
    account_id: int
    start: datetime
    end: datetime
    cpf: str | None
    cnpj: str | None
    linked: bool | None
    status: str | None
    now: datetime
    offset: int
    limit: int


async def page(conn: Connection, where: CobFilter) -> tuple[list[Charge], int]:
    """One page of the account's cobs, oldest first, and how many match in all."""
    args = (
        where.account_id,
        where.start,
        where.end,
        where.cpf,
        where.cnpj,
        where.linked,
        where.status,
        where.now,
    )
    rows = await conn.fetch(
        f"SELECT c.*, count(*) OVER () AS total {_FILTER} "
        "ORDER BY c.created_at, c.id OFFSET $9 LIMIT $10",
        *args,
        where.offset,
        where.limit,
    )
    if rows:
        found = [Charge.from_record({k: v for k, v in r.items() if k != "total"}) for r in rows]
        return found, int(rows[0]["total"])
    # past the last page no row carries the total
    count: int = await conn.fetchval(f"SELECT count(*) {_FILTER}", *args)
    return [], count


async def locations_of(conn: Connection, charge_ids: list[int]) -> dict[int, Location]:
    """The locations serving these charges, by charge id."""
    rows = await conn.fetch(
        """
        SELECT l.id, l.account_id, l.token, l.tipo_cob, l.charge_id, l.created_at, c.txid
        FROM locations l JOIN charges c ON c.id = l.charge_id
        WHERE l.charge_id = ANY($1::bigint[])
        """,
        charge_ids,
    )
    return {r["charge_id"]: Location.from_record(r) for r in rows}


async def payments_of(conn: Connection, transaction_ids: list[int]) -> dict[int, Transaction]:
    """The PAYMENT transactions of these charges, by their numeric id."""
    rows = await conn.fetch(TRANSACTIONS_BY_IDS, transaction_ids)
    return {r["id"]: Transaction.from_record(r) for r in rows}
