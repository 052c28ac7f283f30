"""Windows of the outgoing limits (D5, D6): the Brasília day and the 20:00-06:00 night."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
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


USAGE_BUCKET_SECONDS = 900


def usage_bucket(at: datetime) -> datetime:
    """The quarter-hour (UTC epoch-aligned) whose usage counts a payment created `at`.

    Every time zone's offset is a multiple of 15 minutes, so local midnight and 20:00 fall
    on bucket boundaries and a window's buckets hold exactly the window's payments.
    """
    seconds = int(at.timestamp()) // USAGE_BUCKET_SECONDS * USAGE_BUCKET_SECONDS
    return datetime.fromtimestamp(seconds, tz=at.tzinfo or UTC)


@dataclass(frozen=True, slots=True)
class Window:
    """Where a payment made now counts, and the daily and nightly limits it must fit."""

    bucket: datetime
    day_start: datetime
    night_start: datetime | None
    per_transaction: int
    daily: int
    nightly: int
