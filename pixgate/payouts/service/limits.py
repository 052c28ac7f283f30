"""Per-account outgoing limits: per transaction, per Brasília day, per night.

The rules (what counts, when a payment is refused, the give-back of a voided one) are the
database functions of `pixgate/payouts/sql/020_limits.sql`; this module prices an account's
`Window` (its limits, and where a payment made now counts in local time) and turns a
refusal into the spec's error. A refused payment's transaction rolls its count back with
everything else.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from functools import cache

from pixgate.accounts.public import Account, Terms
from pixgate.core.errors import DailyLimitExceeded, NightLimitExceeded, TransactionLimitExceeded
from pixgate.core.money import format_amount, to_cents
from pixgate.core.settings import Settings
from pixgate.payouts import rules as limits


def window(settings: Settings, account: Terms | Account, now: datetime) -> limits.Window:
    """The account's limits, and where a payment made now counts."""
    return limits.Window(
        day_start=limits.day_start(now, settings.timezone),
        night_start=limits.night_start(now, settings.timezone),
        per_transaction=_limit(account.transaction_limit, settings.default_transaction_limit),
        daily=_limit(account.daily_limit, settings.default_daily_limit),
        nightly=_limit(account.night_limit, settings.default_night_limit),
    )


def _transaction_exceeded(window: limits.Window, amount: int) -> TransactionLimitExceeded:
    return TransactionLimitExceeded(
        f"amount {format_amount(amount)} is above the per-transaction limit "
        f"{format_amount(window.per_transaction)}"
    )


def _daily_exceeded(window: limits.Window, today: int, amount: int) -> DailyLimitExceeded:
    """`today`: the day's total with this payment counted."""
    return DailyLimitExceeded(
        f"{format_amount(today - amount)} already sent today; the daily limit is "
        f"{format_amount(window.daily)}"
    )


def _night_exceeded(window: limits.Window, tonight: int, amount: int) -> NightLimitExceeded:
    return NightLimitExceeded(
        f"{format_amount(tonight - amount)} already sent tonight; the "
        f"20:00-06:00 limit is {format_amount(window.nightly)}"
    )


def refusal(
    limit: limits.Window, reason: str, used: int | None, amount: int
) -> TransactionLimitExceeded | DailyLimitExceeded | NightLimitExceeded:
    """The error of a limit refusal (`reason`: per `payments.REFUSALS`)."""
    if reason == "transaction":
        return _transaction_exceeded(limit, amount)
    assert used is not None, "daily and nightly refusals carry the window's total"
    if reason == "daily":
        return _daily_exceeded(limit, used, amount)
    return _night_exceeded(limit, used, amount)


def _limit(configured: int | None, default: Decimal) -> int:
    return configured if configured is not None else _default_cents(default)


@cache
def _default_cents(default: Decimal) -> int:
    """A default limit of the settings in cents: converted once, not on every payment of
    every account that keeps the defaults."""
    return to_cents(default)
