"""Timestamps on the wire: ISO 8601 in UTC with an explicit `Z`."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(at: datetime | None) -> str | None:
    if at is None:
        return None
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
