"""The outgoing limits' counts, through the database functions of `sql/020_limits.sql`
(the one home of the limit rules: the cash-out's hold runs the same ones)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from pixgate.core.db.pool import Connection
from pixgate.payouts.rules import Window

# SQLSTATEs of limit_check(), by the limit refused.
REFUSALS = {"PXL00": "transaction", "PXL01": "daily", "PXL02": "night"}


class LimitRefused(Exception):
    """`reason` is a value of REFUSALS; `used` the window's total, the payment included."""

    def __init__(self, reason: str, used: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.used = used


async def check(
    conn: Connection, account_id: int, at: datetime, amount: int, window: Window
) -> None:
    """Count `amount` as sent at `at`, or raise LimitRefused for the first limit it exceeds.

    Callers lock the account row first (the hold), so usage rows are always locked after
    account rows and never the other way round.
    """
    try:
        await conn.execute(
            "SELECT limit_check($1, $2, $3, $4, $5, $6, $7, $8)",
            account_id,
            at,
            amount,
            window.per_transaction,
            window.daily,
            window.nightly,
            window.day_start,
            window.night_start,
        )
    except asyncpg.PostgresError as exc:
        reason = REFUSALS.get(exc.sqlstate or "")
        if reason is None:
            raise
        detail = getattr(exc, "detail", None)
        raise LimitRefused(reason, int(detail) if detail else None) from exc
