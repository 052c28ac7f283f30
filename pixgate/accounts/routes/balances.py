"""GET /accounts/balances (Central-Bank style) and GET /api/balance (the standard shape)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from pixgate.accounts.routes.deps import Caller, granted
from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.schemas.balances import AccountBalances, StandardBalance
from pixgate.accounts.service import balances
from pixgate.core.http.error_schemas import SimpleError
from pixgate.core.http.errors import CentralBankRoute
from pixgate.core.http.responses import JSONResponse

router = APIRouter(
    route_class=CentralBankRoute, tags=["balances"], responses={401: {"model": SimpleError}}
)


@router.get("/accounts/balances", response_model=AccountBalances, summary="Account balance")
async def account_balances(caller: Annotated[Caller, granted(Scope.PIX_READ)]) -> JSONResponse:
    return AccountBalances.answer(await balances.get(caller.rt, caller.account_id))


@router.get("/api/balance", response_model=StandardBalance, summary="Balance, standard shape")
async def standard_balance(caller: Annotated[Caller, granted(Scope.PIX_READ)]) -> JSONResponse:
    return StandardBalance.answer(await balances.get(caller.rt, caller.account_id))
