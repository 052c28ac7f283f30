"""Per-account outgoing limits (D6): per transaction, per Brasília day, per night.

Limits count PENDING and CONFIRMED outgoing (WITHDRAW) amounts, not ERROR ones. That
volume is kept per quarter-hour in `limit_usage`: counted when a payment's funds are held,
given back when a hold is voided (the payment ended in ERROR). The check adds the amount and
reads the window's total in one statement, made after the account row is locked, so two
concurrent payments cannot both fit under a limit that only one of them fits; a refused
payment's transaction rolls its count back with everything else.
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


async def check(
    conn: Connection, settings: Settings, account: asyncpg.Record, amount: int, now: datetime
) -> None:
    """Count `amount` as sent now, or raise the first limit it exceeds."""
    per_transaction = _limit(account["transaction_limit"], settings.default_transaction_limit)
    if amount > per_transaction:
        raise TransactionLimitExceeded(
            f"amount {format_amount(amount)} is above the per-transaction limit "
            f"{format_amount(per_transaction)}"
        )
    night = limits.night_start(now, settings.timezone)
    used = await _count(conn, settings, account["id"], amount, now)
    daily = _limit(account["daily_limit"], settings.default_daily_limit)
    if used["today"] > daily:
        raise DailyLimitExceeded(
            f"{format_amount(used['today'] - amount)} already sent today; the daily limit is "
            f"{format_amount(daily)}"
        )
    if night is not None:
        nightly = _limit(account["night_limit"], settings.default_night_limit)
        if used["tonight"] > nightly:
            raise NightLimitExceeded(
                f"{format_amount(used['tonight'] - amount)} already sent tonight; the "
                f"20:00-06:00 limit is {format_amount(nightly)}"
            )


async def count(
    conn: Connection, settings: Settings, account_id: int, amount: int, now: datetime
) -> None:
    """Count a payment the limits do not gate (a charge's split payouts) in the volume."""
    await _count(conn, settings, account_id, amount, now)


async def give_back(conn: Connection, account_id: int, amount: int, created_at: datetime) -> None:
    """A payment ended in ERROR: its amount no longer counts (call after the void's lock)."""
    await limit_usage.subtract(conn, account_id, limits.usage_bucket(created_at), amount)


async def _count(
    conn: Connection, settings: Settings, account_id: int, amount: int, now: datetime
) -> asyncpg.Record:
    return await limit_usage.add(
        conn, account_id, limits.usage_bucket(now), amount,
        day_start=limits.day_start(now, settings.timezone),
        night_start=limits.night_start(now, settings.timezone),
    )


def _limit(configured: int | None, default: object) -> int:
    return configured if configured is not None else to_cents(str(default))
