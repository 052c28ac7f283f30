"""Balance shapes: Central-Bank style and the standard one (GET /api/balance).

GET /accounts/balances is a hot route, read far more often than anything is paid: its answer
is written straight from the balance (`AccountBalances.answer`), not built as a model and
dumped again, which took twice the CPU (docs/performance.md, "Small per-request costs"); the
models describe the answers in the OpenAPI document and read them in the client, and the
tests hold each answer to its model.
"""

from __future__ import annotations

from decimal import Decimal

from pixgate.accounts.service.balances import Balance
from pixgate.core.http.responses import JSONResponse
from pixgate.core.http.schemas import BuiltModel, Money, iso
from pixgate.core.money import to_decimal

_ZERO = to_decimal(0)


class BalanceAmount(BuiltModel):
    available: Money
    blocked: Money
    overdraft: Money


class BalanceItem(BuiltModel):
    event_date: str
    balance_amount: BalanceAmount


class AccountBalances(BuiltModel):
    data: list[BalanceItem]

    @staticmethod
    def answer(balance: Balance) -> JSONResponse:
        return JSONResponse(
            {
                "data": [
                    {
                        "eventDate": iso(balance.at),
                        "balanceAmount": {
                            "available": to_decimal(balance.available),
                            "blocked": to_decimal(balance.blocked),
                            "overdraft": _ZERO,
                        },
                    }
                ]
            }
        )


class StandardBalance(BuiltModel):
    gross_balance: Money
    blocked_balance: Money
    net_balance: Money
    consulted_at: str

    @staticmethod
    def answer(balance: Balance) -> JSONResponse:
        amounts: dict[str, Decimal | str | None] = {
            "grossBalance": to_decimal(balance.available + balance.blocked),
            "blockedBalance": to_decimal(balance.blocked),
            "netBalance": to_decimal(balance.available),
            "consultedAt": iso(balance.at),
        }
        return JSONResponse(amounts)
