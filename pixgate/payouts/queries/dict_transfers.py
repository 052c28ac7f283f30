"""Rows of DICT transfers (`transactions` with kind `dict_transfer`), always scoped by account."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pixgate.core.counterparts import Counterpart
from pixgate.core.db.pool import Connection
from pixgate.ledger.public import Transaction


async def insert_once(
    conn: Connection,
    *,
    account_id: int,
    idempotency_key: uuid.UUID,
    status: str,
    amount: int,
    fee: int,
    end_to_end_id: str,
    pix_key: str,
    pix_key_type: str,
    description: str | None,
    counterpart: Counterpart,
    details: dict[str, Any],
    created_at: datetime,
    error_code: str | None = None,
    error_message: str | None = None,
) -> Transaction | None:
    """Insert the transfer unless the account already used the key; None on such a repeat.

    A transfer inserted already final (ERROR) is processed at its creation.

    The unique index on (account_id, idempotency_key) decides, so concurrent repeats wait
    for the first insert's transaction and then insert nothing.
    """
    row = await conn.fetchrow(
        """
        INSERT INTO transactions (
            account_id, operation, kind, status, idempotency_key, amount, fee, end_to_end_id,
            pix_key, pix_key_type, description, counterpart, counterpart_ispb,
            counterpart_account_id, details, created_at, error_code, error_message, processed_at
        )
        VALUES ($1, 'WITHDRAW', 'dict_transfer', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                $13, $14, $15, $16, $17)
        ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
        RETURNING *
        """,
        account_id,
        status,
        idempotency_key,
        amount,
        fee,
        end_to_end_id,
        pix_key,
        pix_key_type,
        description,
        counterpart.document_json(),
        counterpart.ispb,
        counterpart.account_id,
        details,
        created_at,
        error_code,
        error_message,
        None if status == "PENDING" else created_at,
    )
    return None if row is None else Transaction.from_record(row)


async def by_idempotency_key(
    conn: Connection, account_id: int, idempotency_key: uuid.UUID
) -> Transaction | None:
    """The account's transaction made with this key, of any kind (keys are unique per account)."""
    row = await conn.fetchrow(
        "SELECT * FROM transactions WHERE account_id = $1 AND idempotency_key = $2",
        account_id,
        idempotency_key,
    )
    return None if row is None else Transaction.from_record(row)
