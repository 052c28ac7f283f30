"""GET /accounts/balances (2.7, Central-Bank style) and GET /api/balance (the standard shape)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from pixgate.api.deps import CurrentAccount, RuntimeDep
from pixgate.api.errors import CentralBankRoute
from pixgate.api.schemas.balances import AccountBalances, StandardBalance
from pixgate.api.schemas.common import iso
from pixgate.api.schemas.errors import SimpleError
from pixgate.domain.money import to_number
from pixgate.services import balances

router = APIRouter(
    route_class=CentralBankRoute, tags=["balances"], responses={401: {"model": SimpleError}}
)


@router.get("/accounts/balances", response_model=AccountBalances, summary="Account balance")
async def account_balances(rt: RuntimeDep, who: CurrentAccount) -> dict[str, Any]:
    balance = await balances.get(rt, who.account_id)
    return {
        "data": [
            {
                "eventDate": iso(balance.at),
                "balanceAmount": {
                    "available": to_number(balance.available),
                    "blocked": to_number(balance.blocked),
                    "overdraft": 0,
                },
            }
        ]
    }


@router.get("/api/balance", response_model=StandardBalance, summary="Balance, standard shape")
async def standard_balance(rt: RuntimeDep, who: CurrentAccount) -> dict[str, Any]:
    balance = await balances.get(rt, who.account_id)
    return {
        "grossBalance": to_number(balance.available + balance.blocked),
        "blockedBalance": to_number(balance.blocked),
        "netBalance": to_number(balance.available),
        "consultedAt": iso(balance.at),
    }
