"""Charges (cash-in charges and cobs), their PAYMENT transactions and split recipients as
stored with the charge (their shares and payouts: `charges.queries.charge_splits`).

Generic by `kind` ('cash_in' | 'cob'): the charge's own status vocabulary differs
(PENDING/CONFIRMED vs ATIVA/CONCLUIDA), everything else is shared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import asyncpg

from pixgate.core.counterparts import Counterpart
from pixgate.core.db.faults import Duplicate
from pixgate.core.db.pool import Connection
from pixgate.core.labels import ChargeStatus
from pixgate.core.money import SplitType
from pixgate.ledger.public import Transaction

OPEN_STATUSES = (ChargeStatus.PENDING, ChargeStatus.ATIVA)
"""A charge in one of these states (cash_in, cob) can still be paid, until it expires."""


class DuplicateCharge(Exception):
    """The charge's insert hit a unique constraint other than the externalId's (the
    account's txid: uq_charges_account_txid)."""


@dataclass(frozen=True, slots=True)
class Charge:
    """A `charges` row: a cash-in charge or a cob, by `kind`. `transaction_id` is the numeric
    key of its PAYMENT transaction; `body` the cob's stored request (empty for cash-in)."""

    id: int
    account_id: int
    kind: str
    transaction_id: int
    txid: str
    location_token: str
    pix_code: str
    amount: int  # nullable in the table, but every charge is written with its amount
    status: ChargeStatus
    expires_at: datetime
    revision: int
    body: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    paid_at: datetime | None

    @classmethod
    def from_record(cls, r: asyncpg.Record | dict[str, Any]) -> Charge:
        row = dict(r)
        row["status"] = ChargeStatus(row["status"])
        return cls(**row)


def charge_or_none(r: asyncpg.Record | None) -> Charge | None:
    return None if r is None else Charge.from_record(r)


@dataclass(frozen=True, slots=True)
class CreatedCharge:
    """A charge just written, with its PAYMENT transaction's public id."""

    charge: Charge
    payment_uuid: UUID


@dataclass(frozen=True, slots=True)
class SplitRow:
    """A split recipient as stored with its charge (a cash-in's `splits[]`)."""

    pix_key: str
    pix_key_type: str
    name: str
    document: str
    split_type: SplitType
    value: Decimal
    immediate: bool


async def insert(
    conn: Connection,
    *,
    account_id: int,
    kind: str,
    external_id: str | None,
    amount: int,
    description: str | None,
    details: dict[str, Any],
    txid: str,
    location_token: str,
    pix_code: str,
    status: str,
    expires_at: datetime,
    body: dict[str, Any],
    created_at: datetime,
) -> CreatedCharge | None:
    """The charge and its PENDING PAYMENT transaction, in one statement.

    None when the account already used `external_id` (a concurrent duplicate included);
    a reused txid raises DuplicateCharge (uq_charges_account_txid).
    """
    try:
        row = await conn.fetchrow(
            """
        WITH payment AS (
            INSERT INTO transactions (account_id, operation, kind, status, external_id, amount,
                                      description, details, created_at)
            VALUES ($1, 'PAYMENT', $2, 'PENDING', $3, $4, $5, $6, $7)
            ON CONFLICT (account_id, external_id) DO NOTHING
            RETURNING id, transaction_id
        )
        INSERT INTO charges (account_id, kind, transaction_id, txid, location_token, pix_code,
                             amount, status, expires_at, body, created_at, updated_at)
        SELECT $1, $2, payment.id, $8, $9, $10, $4, $11, $12, $13, $7, $7 FROM payment
        RETURNING *, (SELECT transaction_id FROM payment) AS payment_uuid
        """,
            account_id,
            kind,
            external_id,
            amount,
            description,
            details,
            created_at,
            txid,
            location_token,
            pix_code,
            status,
            expires_at,
            body,
        )
    except Duplicate as exc:
        raise DuplicateCharge(str(exc)) from exc
    if row is None:
        return None
    values = dict(row)
    payment_uuid = values.pop("payment_uuid")
    return CreatedCharge(Charge.from_record(values), payment_uuid)


async def insert_splits(conn: Connection, charge_id: int, splits: Sequence[SplitRow]) -> None:
    if not splits:
        return
    await conn.execute(
        """
        INSERT INTO charge_splits (charge_id, position, pix_key, pix_key_type, name, document,
                                   split_type, value, immediate)
        SELECT $1, s.position, s.pix_key, s.pix_key_type, s.name, s.document, s.split_type,
               s.value, s.immediate
        FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                    $8::numeric[], $9::bool[])
             AS s(position, pix_key, pix_key_type, name, document, split_type, value, immediate)
        """,
        charge_id,
        list(range(len(splits))),
        [s.pix_key for s in splits],
        [s.pix_key_type for s in splits],
        [s.name for s in splits],
        [s.document for s in splits],
        [s.split_type for s in splits],
        [s.value for s in splits],
        [s.immediate for s in splits],
    )


async def by_location_token(conn: Connection, token: str) -> Charge | None:
    """Any account's charge at a location: the payer's side finds the charge it pays.

    A payload location (every cob's) serves the cob linked to it now, or nothing; a cash-in
    charge's token is its own."""
    return charge_or_none(
        await conn.fetchrow(
            """
            SELECT c.* FROM locations l JOIN charges c ON c.id = l.charge_id
            WHERE l.token = $1
            UNION ALL
            SELECT * FROM charges
            WHERE location_token = $1 AND kind <> 'cob'
              AND NOT EXISTS (SELECT 1 FROM locations WHERE token = $1)
            """,
            token,
        )
    )


@dataclass(frozen=True, slots=True)
class PaidCharge:
    """A charge as its account sees it later, by its payment (the dashboard's charge page)."""

    transaction_id: UUID
    external_id: str | None
    description: str | None
    amount: int
    status: str
    pix_code: str
    created_at: datetime
    expires_at: datetime
    paid_at: datetime | None


async def by_payment(conn: Connection, account_id: int, transaction_id: UUID) -> PaidCharge | None:
    """The account's charge whose payment has this public transactionId."""
    row = await conn.fetchrow(
        """
        SELECT c.kind, c.pix_code, c.amount, c.status, c.created_at, c.expires_at, c.paid_at,
               t.transaction_id, t.external_id, t.description
        FROM transactions t JOIN charges c ON c.transaction_id = t.id
        WHERE t.transaction_id = $2 AND t.account_id = $1 AND c.account_id = $1
        """,
        account_id,
        transaction_id,
    )
    if row is None:
        return None
    return PaidCharge(
        transaction_id=row["transaction_id"],
        external_id=row["external_id"],
        description=row["description"],
        amount=row["amount"] or 0,
        status=row["status"],
        pix_code=row["pix_code"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        paid_at=row["paid_at"],
    )


async def by_txid(
    conn: Connection, account_id: int, kind: str, txid: str, *, lock: bool = False
) -> Charge | None:
    """The account's charge of this kind and txid; `lock`: FOR NO KEY UPDATE, until the commit."""
    query = "SELECT * FROM charges WHERE account_id = $1 AND kind = $2 AND txid = $3"
    return charge_or_none(
        await conn.fetchrow(query + " FOR NO KEY UPDATE" if lock else query, account_id, kind, txid)
    )


async def get(conn: Connection, charge_id: int) -> Charge | None:
    return charge_or_none(await conn.fetchrow("SELECT * FROM charges WHERE id = $1", charge_id))


async def mark_paid(
    conn: Connection, charge_id: int, *, paid_at: datetime, now: datetime
) -> Charge | None:
    """Open and unexpired -> paid, once (CONFIRMED for cash_in, CONCLUIDA for cob).

    None when the charge is paid, cancelled or expired already; the row lock makes a
    concurrent second payment wait here and then find it paid.
    """
    row = await conn.fetchrow(
        """
        UPDATE charges
        SET status = CASE kind WHEN 'cob' THEN 'CONCLUIDA' ELSE 'CONFIRMED' END,
            paid_at = $2, updated_at = $3
        WHERE id = $1 AND status = ANY($4::text[]) AND expires_at > $3
        RETURNING *
        """,
        charge_id,
        paid_at,
        now,
        list(OPEN_STATUSES),
    )
    return charge_or_none(row)


async def confirm_payment(
    conn: Connection,
    transaction_id: int,
    *,
    amount: int,
    fee: int,
    end_to_end_id: str,
    counterpart: Counterpart,
    processed_at: datetime,
    pix_key: str | None,
    payer_message: str | None = None,
) -> Transaction:
    """The charge's PENDING PAYMENT becomes CONFIRMED with the payment's facts: the key that
    received it and the payer's message (`details.infoPagador`) among them."""
    row = await conn.fetchrow(
        """
        UPDATE transactions
        SET status = 'CONFIRMED', amount = $2, fee = $3, end_to_end_id = $4,
            counterpart = $5, counterpart_ispb = $6, counterpart_account_id = $7,
            processed_at = $8, pix_key = $9,
            details = details || jsonb_strip_nulls(jsonb_build_object('infoPagador', $10::text))
        WHERE id = $1 AND status = 'PENDING'
        RETURNING *
        """,
        transaction_id,
        amount,
        fee,
        end_to_end_id,
        counterpart.document_json(),
        counterpart.ispb,
        counterpart.account_id,
        processed_at,
        pix_key,
        payer_message,
    )
    if row is None:
        raise RuntimeError(f"payment transaction {transaction_id} of an open charge is not PENDING")
    return Transaction.from_record(row)
