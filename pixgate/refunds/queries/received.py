"""The PIX an account received (CONFIRMED PAYMENTs: a charge or cob paid, a PIX without a
charge, one from another of our accounts), each with its refunds of every door, for the API
Pix's GET /pix, GET /pix/{e2eid} and its webhook by key."""

from __future__ import annotations

import asyncpg

from pixgate.core.db.pool import Connection
from pixgate.refunds.queries.refunds import SELECT_REFUNDS, refund_of
from pixgate.refunds.rules import Devolucao, PixQuery, ReceivedPage, ReceivedPix

_RECEIVED = """
    SELECT t.id, t.account_id, t.end_to_end_id, t.amount, t.pix_key,
           coalesce(t.processed_at, t.created_at) AS at,
           t.details ->> 'infoPagador' AS payer_message, c.txid
    FROM transactions t LEFT JOIN charges c ON c.transaction_id = t.id
    WHERE t.account_id = $1 AND t.operation = 'PAYMENT' AND t.status = 'CONFIRMED'
"""
"""A received PIX is a CONFIRMED PAYMENT of the account; `txid` the charge's it paid."""


async def _devolucoes(conn: Connection, pix_ids: list[int]) -> dict[int, tuple[Devolucao, ...]]:
    """The refunds of these received PIX (every door's, every status), oldest first."""
    rows = await conn.fetch(
        f"{SELECT_REFUNDS} WHERE r.parent_id = ANY($1::bigint[]) AND r.operation = 'REFUND_IN' "
        "ORDER BY r.created_at, r.id",
        pix_ids,
    )
    found: dict[int, list[Devolucao]] = {}
    for row in rows:
        refund = refund_of(row)
        found.setdefault(refund.original_id, []).append(refund.devolucao())
    return {pix_id: tuple(items) for pix_id, items in found.items()}


async def _with_devolucoes(conn: Connection, rows: list[asyncpg.Record]) -> list[ReceivedPix]:
    devolucoes = await _devolucoes(conn, [row["id"] for row in rows]) if rows else {}
    return [
        ReceivedPix(
            id=row["id"],
            account_id=row["account_id"],
            end_to_end_id=row["end_to_end_id"],
            txid=row["txid"],
            amount=row["amount"],
            key=row["pix_key"],
            at=row["at"],
            payer_message=row["payer_message"],
            devolucoes=devolucoes.get(row["id"], ()),
        )
        for row in rows
    ]


async def received_pix(conn: Connection, account_id: int, end_to_end_id: str) -> ReceivedPix | None:
    """The PIX the account received with this end-to-end id, with its refunds; None if the
    account received none by that id."""
    row = await conn.fetchrow(f"{_RECEIVED} AND t.end_to_end_id = $2", account_id, end_to_end_id)
    if row is None:
        return None
    (received,) = await _with_devolucoes(conn, [row])
    return received


_MATCHING = """
    AND t.processed_at >= $2 AND t.processed_at <= $3
    AND ($4::text IS NULL OR c.txid = $4)
    AND ($5::boolean IS NULL OR (c.txid IS NOT NULL) = $5)
    AND ($6::boolean IS NULL OR EXISTS (
        SELECT 1 FROM transactions r WHERE r.parent_id = t.id AND r.operation = 'REFUND_IN'
    ) = $6)
    AND ($7::text IS NULL OR t.counterpart ->> 'document' = $7)
"""
"""GET /pix's filters on `_RECEIVED` ($1 the account)."""
_COUNTING = "SELECT count(*) FROM ("
_COUNT = f"{_COUNTING}{_RECEIVED}{_MATCHING}) AS matching"


async def received_page(conn: Connection, account_id: int, query: PixQuery) -> ReceivedPage:
    """One page of the account's received PIX that match `query`, oldest credit first, and
    how many match in all."""
    args = (
        account_id,
        query.start,
        query.end,
        query.txid,
        query.txid_present,
        query.refund_present,
        query.cpf or query.cnpj,
    )
    total: int = await conn.fetchval(_COUNT, *args)
    rows = await conn.fetch(
        f"{_RECEIVED} {_MATCHING} ORDER BY t.processed_at, t.id LIMIT $8 OFFSET $9",
        *args,
        query.per_page,
        query.page * query.per_page,
    )
    return ReceivedPage(items=tuple(await _with_devolucoes(conn, list(rows))), total=total)
