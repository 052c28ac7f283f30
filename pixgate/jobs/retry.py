"""`Retry`: how a handler asks to run again later, apart from failing."""

from __future__ import annotations


class Retry(Exception):
    """Raised by a handler to be run again after `after` seconds (e.g. a Retry-After)."""

    def __init__(self, after: float, reason: str = "retry requested") -> None:
        super().__init__(reason)
        self.after = after
