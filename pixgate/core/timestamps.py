"""Timestamps on the wire: ISO 8601 in UTC with an explicit `Z`, and the one form read back.

Every date and instant a request carries is ISO 8601's extended form: `2026-11-24`, or
`2026-11-24T10:00:00Z` (RFC 3339's date-time, seconds and offset optional). Python and
pydantic read far more: a number of seconds since the epoch (`0`, `-1`, `1700000000`),
`20261124`, week dates, a space for the `T`. Those are refused, so a typo never becomes the
epoch or another day.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
DATE_TIME_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?$"
)
"""As JSON Schema (ECMA 262) patterns, which the OpenAPI document publishes."""
_DATE = re.compile(DATE_PATTERN)
_DATE_TIME = re.compile(DATE_TIME_PATTERN)


def is_iso_date(text: str) -> bool:
    return _DATE.fullmatch(text) is not None


def is_iso_date_time(text: str) -> bool:
    return _DATE_TIME.fullmatch(text) is not None


def iso(at: datetime | None) -> str | None:
    if at is None:
        return None
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
