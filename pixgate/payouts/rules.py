"""The outgoing limits' windows (the Brasília day and the 20:00-06:00 night) and the modes
in which a payout is accepted.

Every time zone's offset is a multiple of 15 minutes, so these starts fall on the
quarter-hour buckets in which the database counts the volume (`sql/020_limits.sql`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

NIGHT_STARTS = time(20, 0)
NIGHT_ENDS = time(6, 0)


def day_start(now: datetime, tz: str) -> datetime:
    """Local midnight: the daily limit resets at 00:00 Brasília time."""
    local = now.astimezone(ZoneInfo(tz))
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def night_start(now: datetime, tz: str) -> datetime | None:
    """Start of the night `now` falls in (20:00 to 06:00 local), or None during the day."""
    local = now.astimezone(ZoneInfo(tz))
    if local.time() >= NIGHT_STARTS:
        return local.replace(hour=20, minute=0, second=0, microsecond=0)
    if local.time() < NIGHT_ENDS:
        previous = local - timedelta(days=1)
        return previous.replace(hour=20, minute=0, second=0, microsecond=0)
    return None


@dataclass(frozen=True, slots=True)
class Window:
    """Where a payment made now counts, and the limits it must fit (cents)."""

    day_start: datetime
    night_start: datetime | None
    per_transaction: int
    daily: int
    nightly: int


class AcceptMode(StrEnum):
    """How `payout_accept()` (sql/040_payouts.sql) accepts a payout whose row is written."""

    CASH_OUT = "cash_out"
    """Priced from the cached terms: terms, limits, then balance checked (payout_create())."""
    COUNTED = "counted"
    """Limits decided before (DICT transfer, split): counted; False when the balance is short."""
    REFUND = "refund"
    """A refund of a received PIX: no fee, no limits (refund_create())."""
    IN_HOUSE = "in_house"
    """Pays one of our charges or accounts' keys and settles at once: limits and balance
    checked, no job."""
    IN_HOUSE_COUNTED = "in_house_counted"
    """A DICT transfer to one of our accounts' keys, settled at once: counted as COUNTED
    (False when the balance is short), no job."""
