"""Transactions written final at once, and the lock they are written under: a PIX received
without a charge (the sandbox payer's `incoming`), a WITHDRAW settled in the house (a QR
cash-out of one of our charges, a cash-out to one of our accounts' keys), and both sides of
an internal PIX locked in id order. The ledger moves that go with them are the callers'
(`pixgate.ledger`), in the same transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pixgate.accounts.public import Account
from pixgate.core.counterparts import Counterpart
from pixgate.core.db.pool import Connection
from pixgate.ledger.public import Transaction


async def insert_received(
    conn: Connection,
    *,
    account_id: int,
    kind: str,
    amount: int,
    fee: int,
    end_to_end_id: str,
    counterpart: Counterpart,
    at: datetime,
    description: str | None = None,
    pix_key: str | None = None,
    payer_message: str | None = None,
) -> Transaction:
    """A PIX received without a charge (sandbox `incoming`), CONFIRMED at once, with the key
    that received it and the payer's message (`details.infoPagador`)."""
    row = await conn.fetchrow(
        """
        INSERT INTO transactions (account_id, operation, kind, status, amount, fee,
                                  end_to_end_id, counterpart, counterpart_ispb,
                                  counterpart_account_id, description, created_at,
                                  processed_at, pix_key, details)
        VALUES ($1, 'PAYMENT', $2, 'CONFIRMED', $3, $4, $5, $6, $7, $8, $9, $10, $10, $11,
                jsonb_strip_nulls(jsonb_build_object('infoPagador', $12::text)))
        RETURNING *
        """,
        account_id,
        kind,
        amount,
        fee,
        end_to_end_id,
        counterpart.document_json(),
        counterpart.ispb,
        counterpart.account_id,
        description,
        at,
        pix_key,
        payer_message,
    )
    assert row is not None
    return Transaction.from_record(row)


async def lock_accounts(conn: Connection, account_ids: list[int]) -> dict[int, Account]:
    """Both sides of an internal PIX, locked in id order.

    Every path that locks two accounts and a charge takes the accounts first, by ascending
    id, then the charge (`charges.mark_paid`): two payments crossing between the same
    accounts, or a sandbox payment racing a QR cash-out of the same charge, wait instead of
    deadlocking.
    """
    rows = await conn.fetch(
        "SELECT * FROM accounts WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE",
        account_ids,
    )
    return {row["id"]: Account.from_record(row) for row in rows}


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
    counterpart: Counterpart,
    description: str | None,
    details: dict[str, Any],
    at: datetime,
    error: tuple[str, str] | None = None,
) -> Transaction | None:
    """A WITHDRAW settled on the spot (internal PIX), CONFIRMED, or in ERROR with `error`'s
    code and message; None when the externalId is taken."""
    row = await conn.fetchrow(
        """
        INSERT INTO transactions (account_id, operation, kind, status, external_id, amount, fee,
                                  end_to_end_id, pix_key, pix_key_type, counterpart,
                                  counterpart_ispb, counterpart_account_id, description,
                                  details, created_at, processed_at, error_code, error_message)
        VALUES ($1, 'WITHDRAW', $2, CASE WHEN $15::text IS NULL THEN 'CONFIRMED' ELSE 'ERROR' END,
                $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $15, $16)
        ON CONFLICT (account_id, external_id) DO NOTHING
        RETURNING *
        """,
        account_id,
        kind,
        external_id,
        amount,
        fee,
        end_to_end_id,
        pix_key,
        pix_key_type,
        counterpart.document_json(),
        counterpart.ispb,
        counterpart.account_id,
        description,
        details,
        at,
        error[0] if error else None,
        error[1] if error else None,
    )
    return None if row is None else Transaction.from_record(row)
