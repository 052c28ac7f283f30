"""Outgoing payment rows (cash-out, QR cash-out, DICT transfer, split payouts)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from pixgate.db.pool import Connection


async def by_external_id(conn: Connection, account_id: int, external_id: str) -> UUID | None:
    found: UUID | None = await conn.fetchval(
        "SELECT transaction_id FROM transactions WHERE account_id = $1 AND external_id = $2",
        account_id,
        external_id,
    )
    return found


async def insert_pending(
    conn: Connection,
    *,
    account_id: int,
    kind: str,
    external_id: str | None,
    amount: int,
    fee: int,
    pix_key: str | None,
    pix_key_type: str | None,
    description: str | None,
    details: dict[str, Any],
    created_at: datetime,
    parent_id: int | None = None,
) -> asyncpg.Record | None:
    """A PENDING WITHDRAW; None when the externalId is already taken (a concurrent duplicate)."""
    return await conn.fetchrow(
        """
        INSERT INTO transactions (account_id, operation, kind, status, external_id, amount, fee,
                                  pix_key, pix_key_type, description, details, created_at,
                                  parent_id)
        VALUES ($1, 'WITHDRAW', $2, 'PENDING', $3, $4, $5, $6, $7, $8, $9, $10, $11)
        ON CONFLICT (account_id, external_id) DO NOTHING
        RETURNING id, transaction_id, external_id, status, created_at
        """,
        account_id, kind, external_id, amount, fee, pix_key, pix_key_type, description,
        details, created_at, parent_id,
    )


async def get(conn: Connection, transaction_id: int) -> asyncpg.Record | None:
    return await conn.fetchrow("SELECT * FROM transactions WHERE id = $1", transaction_id)


async def finalize(
    conn: Connection,
    transaction_id: int,
    *,
    status: str,
    end_to_end_id: str,
    counterpart: dict[str, Any] | None,
    error_code: str | None,
    error_message: str | None,
    processed_at: datetime,
) -> asyncpg.Record | None:
    """PENDING -> final, once: None when another run already finished it."""
    return await conn.fetchrow(
        """
        UPDATE transactions
        SET status = $2, end_to_end_id = coalesce(end_to_end_id, $3),
            counterpart = coalesce($4::jsonb, counterpart),
            error_code = $5, error_message = $6, processed_at = $7
        WHERE id = $1 AND status = 'PENDING'
        RETURNING id, account_id, amount, fee, status, created_at
        """,
        transaction_id, status, end_to_end_id, counterpart, error_code, error_message,
        processed_at,
    )
