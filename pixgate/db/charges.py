"""Charges (cash-in charges and cobs), their PAYMENT transactions and split recipients.

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

from pixgate.db.pool import Connection
from pixgate.domain.money import SplitType

OPEN_STATUSES = ("PENDING", "ATIVA")
"""A charge in one of these states (cash_in, cob) can still be paid, until it expires."""


@dataclass(frozen=True, slots=True)
class SplitRow:
    """A split recipient as stored with its charge (4.3 `splits[]`)."""

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
) -> asyncpg.Record | None:
    """The charge and its PENDING PAYMENT transaction, in one statement.

    None when the account already used `external_id` (a concurrent duplicate included);
    a reused txid raises asyncpg's UniqueViolationError (uq_charges_account_txid).
    Returns the charge's columns plus `payment_uuid` (the transaction's public id).
    """
    return await conn.fetchrow(
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


async def by_location_token(conn: Connection, token: str) -> asyncpg.Record | None:
    """Any account's charge at a location: the payer's side finds the charge it pays."""
    return await conn.fetchrow("SELECT * FROM charges WHERE location_token = $1", token)


async def by_txid(conn: Connection, account_id: int, kind: str, txid: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        "SELECT * FROM charges WHERE account_id = $1 AND kind = $2 AND txid = $3",
        account_id,
        kind,
        txid,
    )


async def by_payment(
    conn: Connection, account_id: int, transaction_id: UUID
) -> asyncpg.Record | None:
    """The account's charge whose payment has this public transactionId."""
    return await conn.fetchrow(
        """
        SELECT c.kind, c.pix_code, c.amount, c.status, c.created_at, c.expires_at, c.paid_at,
               t.transaction_id, t.external_id, t.description
        FROM transactions t JOIN charges c ON c.transaction_id = t.id
        WHERE t.transaction_id = $2 AND t.account_id = $1 AND c.account_id = $1
        """,
        account_id,
        transaction_id,
    )


async def get(conn: Connection, charge_id: int) -> asyncpg.Record | None:
    return await conn.fetchrow("SELECT * FROM charges WHERE id = $1", charge_id)


async def mark_paid(
    conn: Connection, charge_id: int, *, paid_at: datetime, now: datetime
) -> asyncpg.Record | None:
    """Open and unexpired -> paid, once (CONFIRMED for cash_in, CONCLUIDA for cob).

    None when the charge is paid, cancelled or expired already; the row lock makes a
    concurrent second payment wait here and then find it paid.
    """
    return await conn.fetchrow(
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


async def confirm_payment(
    conn: Connection,
    transaction_id: int,
    *,
    amount: int,
    fee: int,
    end_to_end_id: str,
    counterpart: dict[str, Any],
    processed_at: datetime,
) -> asyncpg.Record:
    """The charge's PENDING PAYMENT becomes CONFIRMED with the payment's facts."""
    row = await conn.fetchrow(
        """
        UPDATE transactions
        SET status = 'CONFIRMED', amount = $2, fee = $3, end_to_end_id = $4,
            counterpart = $5, processed_at = $6
        WHERE id = $1 AND status = 'PENDING'
        RETURNING id, transaction_id, account_id, amount, fee, end_to_end_id
        """,
        transaction_id,
        amount,
        fee,
        end_to_end_id,
        counterpart,
        processed_at,
    )
    if row is None:
        raise RuntimeError(f"payment transaction {transaction_id} of an open charge is not PENDING")
    return row


async def insert_received(
    conn: Connection,
    *,
    account_id: int,
    kind: str,
    amount: int,
    fee: int,
    end_to_end_id: str,
    counterpart: dict[str, Any],
    at: datetime,
    description: str | None = None,
) -> asyncpg.Record:
    """A PIX received without a charge (sandbox `incoming`), CONFIRMED at once."""
    row = await conn.fetchrow(
        """
        INSERT INTO transactions (account_id, operation, kind, status, amount, fee,
                                  end_to_end_id, counterpart, description, created_at,
                                  processed_at)
        VALUES ($1, 'PAYMENT', $2, 'CONFIRMED', $3, $4, $5, $6, $7, $8, $8)
        RETURNING id, transaction_id, account_id, amount, fee, end_to_end_id
        """,
        account_id,
        kind,
        amount,
        fee,
        end_to_end_id,
        counterpart,
        description,
        at,
    )
    assert row is not None
    return row


# --- splits ------------------------------------------------------------------------------


async def splits_of(conn: Connection, charge_id: int) -> list[asyncpg.Record]:
    return await conn.fetch(
        "SELECT * FROM charge_splits WHERE charge_id = $1 ORDER BY position", charge_id
    )


async def schedule_splits(
    conn: Connection, split_ids: list[int], amounts: list[int], due_at: list[datetime | None]
) -> None:
    """Record each split's share of the payment and when it is paid out (None: never, 0 cents)."""
    await conn.execute(
        """
        UPDATE charge_splits s SET amount = u.amount, due_at = u.due_at
        FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[]) AS u(id, amount, due_at)
        WHERE s.id = u.id
        """,
        split_ids,
        amounts,
        due_at,
    )


async def claim_split_run(conn: Connection, account_id: int, run_at: datetime) -> bool:
    """True for the one transaction that schedules this account's run at `run_at`."""
    status = await conn.execute(
        "INSERT INTO split_runs (account_id, run_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        account_id,
        run_at,
    )
    return status == "INSERT 0 1"


async def due_splits(conn: Connection, account_id: int, due_by: datetime) -> list[asyncpg.Record]:
    """The account's unpaid splits due by `due_by`, locked (a concurrent run skips them),
    with the PAYMENT transaction they come from as `parent_id`."""
    return await conn.fetch(
        """
        SELECT s.*, c.transaction_id AS parent_id, c.txid
        FROM charge_splits s JOIN charges c ON c.id = s.charge_id
        WHERE c.account_id = $1 AND s.payout_id IS NULL AND s.due_at <= $2
        ORDER BY s.due_at, s.id
        FOR UPDATE OF s SKIP LOCKED
        """,
        account_id,
        due_by,
    )


async def link_payout(conn: Connection, split_id: int, payout_id: int) -> None:
    await conn.execute(
        "UPDATE charge_splits SET payout_id = $2 WHERE id = $1 AND payout_id IS NULL",
        split_id,
        payout_id,
    )


async def fail_unsent(
    conn: Connection, transaction_id: int, *, error_code: str, error_message: str, at: datetime
) -> None:
    """A PENDING payout that never left (nothing held): ERROR, as the settlement would say."""
    await conn.execute(
        """
        UPDATE transactions SET status = 'ERROR', error_code = $2, error_message = $3,
                                processed_at = $4
        WHERE id = $1 AND status = 'PENDING'
        """,
        transaction_id,
        error_code,
        error_message,
        at,
    )


async def lock_accounts(conn: Connection, account_ids: list[int]) -> dict[int, asyncpg.Record]:
    """Both sides of an internal PIX, locked in id order.

    Every path that locks two accounts and a charge takes the accounts first, by ascending
    id, then the charge (`mark_paid`): two payments crossing between the same accounts, or a
    sandbox payment racing a QR cash-out of the same charge, wait instead of deadlocking.
    """
    rows = await conn.fetch(
        "SELECT * FROM accounts WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE",
        account_ids,
    )
    return {row["id"]: row for row in rows}


async def insert_settled_withdraw(
    conn: Connection,
    *,
    account_id: int,
    kind: str,
    external_id: str,
    amount: int,
    fee: int,
    end_to_end_id: str,
    pix_key: str | None,
    pix_key_type: str | None,
    counterpart: dict[str, Any],
    description: str | None,
    details: dict[str, Any],
    at: datetime,
) -> asyncpg.Record | None:
    """A WITHDRAW settled on the spot (internal PIX); None when the externalId is taken."""
    return await conn.fetchrow(
        """
        INSERT INTO transactions (account_id, operation, kind, status, external_id, amount, fee,
                                  end_to_end_id, pix_key, pix_key_type, counterpart, description,
                                  details, created_at, processed_at)
        VALUES ($1, 'WITHDRAW', $2, 'CONFIRMED', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
        ON CONFLICT (account_id, external_id) DO NOTHING
        RETURNING id, transaction_id, external_id, status, created_at
        """,
        account_id,
        kind,
        external_id,
        amount,
        fee,
        end_to_end_id,
        pix_key,
        pix_key_type,
        counterpart,
        description,
        details,
        at,
    )
