"""A receiver's Retry-After is hostile input too: whatever it says, reading it never raises."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pixgate.webhooks.rules.webhooks import parse_retry_after

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("value", ["\u00b2", "1\u00b3", "\u0663", "", "  ", "-5", "1e3", "\x00"])
def test_anything_but_ascii_seconds_or_a_date_is_ignored(value: str) -> None:
    assert parse_retry_after(value, NOW) is None


def test_seconds_and_http_dates() -> None:
    assert parse_retry_after(" 120 ", NOW) == 120.0
    assert parse_retry_after("Tue, 24 Nov 2026 12:01:00 GMT", NOW) == 60.0
