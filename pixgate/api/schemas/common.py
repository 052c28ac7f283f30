"""Shapes shared across routers: timestamps and money on the wire."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(at: datetime | None) -> str | None:
    """ISO 8601 with an explicit `Z` (D5)."""
    if at is None:
        return None
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
