"""Balances, Central-Bank style and standard: read from the same ledger-backed row in both."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pixgate.accounts.queries import accounts as account_rows
from pixgate.core.errors import NotFound
from pixgate.runtime import Runtime


@dataclass(frozen=True, slots=True)
class Balance:
    available: int
    blocked: int
    at: datetime


async def get(rt: Runtime, account_id: int) -> Balance:
    row = await account_rows.balance(rt.db, account_id)
    if row is None:
        raise NotFound("account not found")
    return Balance(available=row.available, blocked=row.blocked, at=rt.clock.now())
