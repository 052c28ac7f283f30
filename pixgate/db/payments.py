"""Outgoing payment rows (cash-out, QR cash-out, DICT transfer, split payouts)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from pixgate.db.jobs import CHANNEL as JOBS_CHANNEL
from pixgate.db.notify import notify_after_commit
from pixgate.db.pool import Connection
from pixgate.db.webhooks import DELIVER_JOB, DELIVER_JOB_MAX_RUNS
from pixgate.domain.limits import Window

# SQLSTATEs raised by the hold_payout() function (migration 0007), by reason.
REFUSALS = {
    "PXT01": "terms",
    "PXB01": "balance",
    "PXL00": "transaction",
    "PXL01": "daily",
    "PXL02": "night",
}


class PayoutRefused(Exception):
    """hold_payout() wrote nothing: `reason` is a value of REFUSALS; `used` the limit's total."""

    def __init__(self, reason: str, used: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.used = used


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


async def settle_payout(
    conn: Connection,
    transaction_id: int,
    *,
    status: str,
    end_to_end_id: str,
    counterpart: dict[str, Any] | None,
    error_code: str | None,
    error_message: str | None,
    processed_at: datetime,
    event_type: str,
) -> asyncpg.Record | None:
    """PENDING -> final once, its event, the hold posted or voided: ONE round trip.

    The `settle_payout()` function (migration 0008), called outside a transaction. None when
    another run already finished it (nothing written)."""
    row = await conn.fetchrow(
        "SELECT account_id, status, jobs FROM settle_payout($1, $2, $3, $4, $5, $6, $7, $8, $9,"
        " $10)",
        transaction_id, status, end_to_end_id, counterpart, error_code, error_message,
        processed_at, event_type, DELIVER_JOB, DELIVER_JOB_MAX_RUNS,
    )
    if row is not None and row["jobs"]:
        notify_after_commit(conn, JOBS_CHANNEL)
    return row


async def hold_payout(
    conn: Connection,
    *,
    account_id: int,
    kind: str,
    external_id: str,
    amount: int,
    fee: int,
    pix_key: str,
    pix_key_type: str,
    description: str | None,
    details: dict[str, Any],
    created_at: datetime,
    job_kind: str,
    run_at: datetime,
    terms: asyncpg.Record,
    limits: Window,
) -> asyncpg.Record | None:
    """The PENDING row, its settlement job, the hold and the limit count: ONE round trip.

    Call it outside a transaction: the statement is its own, committed on return or rolled
    back with a PayoutRefused. `terms` is the account row the fee and limits were computed
    from; if the locked row differs, the refusal's reason is "terms". None: the externalId
    was already used (nothing written).
    """
    try:
        row = await conn.fetchrow(
            "SELECT * FROM hold_payout($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,"
            " $14, $15, $16, $17, $18, $19, $20)",
            account_id, kind, external_id, amount, fee, pix_key, pix_key_type, description,
            details, created_at, job_kind, run_at, terms["fees"],
            [terms["transaction_limit"], terms["daily_limit"], terms["night_limit"]],
            limits.per_transaction, limits.daily, limits.nightly, limits.bucket,
            limits.day_start, limits.night_start,
        )
    except asyncpg.PostgresError as exc:
        reason = REFUSALS.get(exc.sqlstate)
        if reason is None:
            raise
        detail = exc.detail
        raise PayoutRefused(reason, int(detail) if detail else None) from None
    if row is not None:
        notify_after_commit(conn, JOBS_CHANNEL)
    return row
