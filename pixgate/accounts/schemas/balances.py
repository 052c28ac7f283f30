"""Balance shapes: Central-Bank style and the standard one (GET /api/balance).

GET /accounts/balances is a hot route: each answer is validated once, by field name
(`BuiltModel`).
"""

from __future__ import annotations

from pixgate.accounts.service.balances import Balance
from pixgate.core.http.schemas import BuiltModel, Money, iso
from pixgate.core.money import to_decimal


class BalanceAmount(BuiltModel):
    available: Money
    blocked: Money
    overdraft: Money


class BalanceItem(BuiltModel):
    event_date: str
    balance_amount: BalanceAmount


class AccountBalances(BuiltModel):
    data: list[BalanceItem]

    @classmethod
    def of(cls, balance: Balance) -> AccountBalances:
        amounts = {
            "available": to_decimal(balance.available),
            "blocked": to_decimal(balance.blocked),
            "overdraft": to_decimal(0),
        }
        return cls.model_validate(
            {"data": [{"event_date": iso(balance.at), "balance_amount": amounts}]}
        )


class StandardBalance(BuiltModel):
    gross_balance: Money
    blocked_balance: Money
    net_balance: Money
    consulted_at: str

    @classmethod
    def of(cls, balance: Balance) -> StandardBalance:
        return cls.model_validate(
            {
                "gross_balance": to_decimal(balance.available + balance.blocked),
                "blocked_balance": to_decimal(balance.blocked),
                "net_balance": to_decimal(balance.available),
                "consulted_at": iso(balance.at),
            }
        )
