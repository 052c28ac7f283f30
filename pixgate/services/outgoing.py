"""The core every outgoing payment shares once its row is written: hold, count, queue.

A DICT transfer and a charge's split payout write their own PENDING row (each has its own
idempotency rule), then hand it here: the funds (amount + fee) are held, the amount is
counted in the limits' volume and the settlement job is queued, in the caller's transaction
and by the same database function as every other payout (`payout_hold()`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pixgate.db import jobs, payments
from pixgate.db.pool import Connection
from pixgate.domain import limits
from pixgate.settings import Settings


async def hold_and_queue(
    conn: Connection,
    settings: Settings,
    account_id: int,
    transaction_id: int,
    *,
    amount: int,
    fee: int,
    now: datetime,
) -> bool:
    """False, and nothing written, when the account's available balance is short."""
    return await payments.hold_and_queue(
        conn,
        account_id,
        transaction_id,
        amount=amount,
        fee=fee,
        created_at=now,
        day_start=limits.day_start(now, settings.timezone),
        night_start=limits.night_start(now, settings.timezone),
        run_at=now + timedelta(milliseconds=settings.settlement_delay_ms),
        job=jobs.SETTLE_PAYOUT,
    )
