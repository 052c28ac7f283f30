"""Balance shapes: Central-Bank style (2.7) and the standard one (GET /api/balance)."""

from __future__ import annotations

from pydantic import BaseModel


class BalanceAmount(BaseModel):
    available: float
    blocked: float
    overdraft: float


class BalanceItem(BaseModel):
    eventDate: str
    balanceAmount: BalanceAmount


class AccountBalances(BaseModel):
    data: list[BalanceItem]


class StandardBalance(BaseModel):
    grossBalance: float
    blockedBalance: float
    netBalance: float
    consultedAt: str
