"""Balance shapes: Central-Bank style (2.7) and the standard one (GET /api/balance).

GET /accounts/balances is a hot route: each answer is validated once, by field name
(`BuiltModel`).
"""

from __future__ import annotations

from pixgate.api.schemas.common import BuiltModel, iso
from pixgate.domain.money import to_number
from pixgate.services.balances import Balance


class BalanceAmount(BuiltModel):
    available: float
    blocked: float
    overdraft: float


class BalanceItem(BuiltModel):
    event_date: str
    balance_amount: BalanceAmount


class AccountBalances(BuiltModel):
    data: list[BalanceItem]

    @classmethod
    def of(cls, balance: Balance) -> AccountBalances:
        amounts = {
            "available": to_number(balance.available),
            "blocked": to_number(balance.blocked),
            "overdraft": 0.0,
        }
        return cls.model_validate(
            {"data": [{"event_date": iso(balance.at), "balance_amount": amounts}]}
        )


class StandardBalance(BuiltModel):
    gross_balance: float
    blocked_balance: float
    net_balance: float
    consulted_at: str

    @classmethod
    def of(cls, balance: Balance) -> StandardBalance:
        return cls.model_validate(
            {
                "gross_balance": to_number(balance.available + balance.blocked),
                "blocked_balance": to_number(balance.blocked),
                "net_balance": to_number(balance.available),
                "consulted_at": iso(balance.at),
            }
        )
