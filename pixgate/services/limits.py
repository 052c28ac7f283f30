"""Per-account outgoing limits (D6): per transaction, per Brasília day, per night.

Checked inside the caller's transaction after the account row is locked (by the hold or
by SELECT ... FOR UPDATE): the check's statement starts after the lock was granted, so in
READ COMMITTED it sees every payment committed before, and two concurrent payments cannot
both fit under a limit that only one of them fits. Limits count PENDING and CONFIRMED
outgoing (WITHDRAW) amounts, not ERROR ones.
"""

from __future__ import annotations

from datetime import datetime

import asyncpg

from pixgate.db.pool import Connection
from pixgate.domain import limits
from pixgate.domain.errors import (
    DailyLimitExceeded,
    NightLimitExceeded,
    TransactionLimitExceeded,
)
from pixgate.domain.money import format_amount, to_cents
from pixgate.settings import Settings


async def check(
    conn: Connection,
    settings: Settings,
    account: asyncpg.Record,
    amount: int,
    now: datetime,
    *,
    inserted: int | None = None,
) -> None:
    """Raise the first limit `amount` would exceed; `inserted` is the caller's own new
    transaction row, already written, which must not count twice."""
    per_transaction = _limit(account["transaction_limit"], settings.default_transaction_limit)
    if amount > per_transaction:
        raise TransactionLimitExceeded(
            f"amount {format_amount(amount)} is above the per-transaction limit "
            f"{format_amount(per_transaction)}"
        )
    day = limits.day_start(now, settings.timezone)
    night = limits.night_start(now, settings.timezone)
    used = await conn.fetchrow(
        """
        SELECT coalesce(sum(amount) FILTER (WHERE created_at >= $3), 0) AS today,
               coalesce(sum(amount) FILTER (WHERE created_at >= $4), 0) AS tonight
        FROM transactions
        WHERE account_id = $1 AND operation = 'WITHDRAW' AND status <> 'ERROR'
          AND created_at >= $2 AND id IS DISTINCT FROM $5
        """,
        account["id"],
        min(day, night) if night else day,
        day,
        night or day,
        inserted,
    )
    assert used is not None
    daily = _limit(account["daily_limit"], settings.default_daily_limit)
    if used["today"] + amount > daily:
        raise DailyLimitExceeded(
            f"{format_amount(used['today'])} already sent today; the daily limit is "
            f"{format_amount(daily)}"
        )
    if night is not None:
        nightly = _limit(account["night_limit"], settings.default_night_limit)
        if used["tonight"] + amount > nightly:
            raise NightLimitExceeded(
                f"{format_amount(used['tonight'])} already sent tonight; the 20:00-06:00 "
                f"limit is {format_amount(nightly)}"
            )


def _limit(configured: int | None, default: object) -> int:
    return configured if configured is not None else to_cents(str(default))
