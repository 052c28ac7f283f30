"""Shapes shared across routers: timestamps on the wire."""

from __future__ import annotations

from pixgate.timestamps import iso

__all__ = ["iso"]
