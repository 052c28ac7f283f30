"""Timestamps on the wire: ISO 8601 with an explicit `Z` (D5)."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(at: datetime | None) -> str | None:
    if at is None:
        return None
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
