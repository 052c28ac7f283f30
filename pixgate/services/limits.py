"""Per-account outgoing limits (D6): per transaction, per Brasília day, per night.

Limits count PENDING and CONFIRMED outgoing (WITHDRAW) amounts, not ERROR ones. That
volume is kept per quarter-hour in `limit_usage`: counted when a payment's funds are held,
given back when a hold is voided (the payment ended in ERROR; the `settle_payout()` function
of migration 0008 does it with the void). The cash-out's own check runs inside the
`hold_payout()` function (migration 0007) from the `Window` built here. The check adds the
amount and reads the window's total in one statement, made after the account row is
locked, so two concurrent payments cannot both fit under a limit that only one of them
fits; a refused payment's transaction rolls its count back with everything else.
"""

from __future__ import annotations

from datetime import datetime

import asyncpg

from pixgate.db import limit_usage
from pixgate.db.pool import Connection
from pixgate.domain import limits
from pixgate.domain.errors import (
    DailyLimitExceeded,
    NightLimitExceeded,
    TransactionLimitExceeded,
)
from pixgate.domain.money import format_amount, to_cents
from pixgate.settings import Settings


def window(settings: Settings, account: asyncpg.Record, now: datetime) -> limits.Window:
    """The account's limits, and where a payment made now counts."""
    return limits.Window(
        bucket=limits.usage_bucket(now),
        day_start=limits.day_start(now, settings.timezone),
        night_start=limits.night_start(now, settings.timezone),
        per_transaction=_limit(account["transaction_limit"], settings.default_transaction_limit),
        daily=_limit(account["daily_limit"], settings.default_daily_limit),
        nightly=_limit(account["night_limit"], settings.default_night_limit),
    )


def transaction_exceeded(window: limits.Window, amount: int) -> TransactionLimitExceeded:
    return TransactionLimitExceeded(
        f"amount {format_amount(amount)} is above the per-transaction limit "
        f"{format_amount(window.per_transaction)}"
    )


def daily_exceeded(window: limits.Window, today: int, amount: int) -> DailyLimitExceeded:
    """`today`: the day's total with this payment counted."""
    return DailyLimitExceeded(
        f"{format_amount(today - amount)} already sent today; the daily limit is "
        f"{format_amount(window.daily)}"
    )


def night_exceeded(window: limits.Window, tonight: int, amount: int) -> NightLimitExceeded:
    return NightLimitExceeded(
        f"{format_amount(tonight - amount)} already sent tonight; the "
        f"20:00-06:00 limit is {format_amount(window.nightly)}"
    )


async def check(
    conn: Connection, settings: Settings, account: asyncpg.Record, amount: int, now: datetime
) -> None:
    """Count `amount` as sent now, or raise the first limit it exceeds."""
    limit = window(settings, account, now)
    if amount > limit.per_transaction:
        raise transaction_exceeded(limit, amount)
    used = await limit_usage.add(
        conn, account["id"], limit.bucket, amount,
        day_start=limit.day_start, night_start=limit.night_start,
    )
    if used["today"] > limit.daily:
        raise daily_exceeded(limit, used["today"], amount)
    if limit.night_start is not None and used["tonight"] > limit.nightly:
        raise night_exceeded(limit, used["tonight"], amount)


async def count(
    conn: Connection, settings: Settings, account_id: int, amount: int, now: datetime
) -> None:
    """Count a payment the limits do not gate (a charge's split payouts) in the volume."""
    await limit_usage.add(
        conn, account_id, limits.usage_bucket(now), amount,
        day_start=limits.day_start(now, settings.timezone),
        night_start=limits.night_start(now, settings.timezone),
    )


def _limit(configured: int | None, default: object) -> int:
    return configured if configured is not None else to_cents(str(default))
