"""Time as a dependency, so limits and expiries can be tested at 19:59 and 20:00 (tests put
`tests.support.FixedClock` in its place)."""

from __future__ import annotations

from datetime import UTC, datetime


class Clock:
    def now(self) -> datetime:
        return datetime.now(UTC)
