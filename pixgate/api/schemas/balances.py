"""Balance shapes: Central-Bank style (2.7) and the standard one (D3)."""

from __future__ import annotations

from pydantic import BaseModel


class BalanceAmount(BaseModel):
    available: float
    blocked: float
    overdraft: float


class BalanceItem(BaseModel):
    eventDate: str  # noqa: N815
    balanceAmount: BalanceAmount  # noqa: N815


class AccountBalances(BaseModel):
    data: list[BalanceItem]


class StandardBalance(BaseModel):
    grossBalance: float  # noqa: N815
    blockedBalance: float  # noqa: N815
    netBalance: float  # noqa: N815
    consultedAt: str  # noqa: N815
