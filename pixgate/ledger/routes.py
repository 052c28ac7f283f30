"""GET /api/transactions and GET /api/pix/transactions/pix-key/{pixKey}."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core.http.error_schemas import ApiError
from pixgate.core.http.intake.params import Day, Page, PageSize
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.responses import JSONResponse, exact, show_read
from pixgate.ledger.schemas import TransactionPage
from pixgate.ledger.service import transactions

router = APIRouter(
    route_class=PixgateRoute,
    tags=["transactions"],
    responses={400: {"model": ApiError}, 401: {"model": ApiError}},
)

Status = Literal["PENDING", "CONFIRMED", "ERROR"]
Operation = Literal["PAYMENT", "WITHDRAW", "REFUND_IN", "REFUND_OUT"]


@router.get("/api/transactions", response_model=TransactionPage, summary="Account statement")
async def list_transactions(
    caller: Annotated[Caller, granted(Scope.PIX_READ)],
    page: Page = 1,
    size: PageSize = 20,
    status: Status | None = None,
    type: Operation | None = None,
    startDate: Day = None,
    endDate: Day = None,
    externalId: str | None = None,
    endToEndId: str | None = None,
) -> JSONResponse:
    result = await transactions.statement(
        caller.rt,
        caller.account_id,
        transactions.ListQuery(
            page, size, status, type, startDate, endDate, externalId, endToEndId
        ),
    )
    return _shown(result)


@router.get(
    "/api/pix/transactions/pix-key/{pixKey}",
    response_model=TransactionPage,
    summary="Transactions of one PIX key",
)
async def list_by_pix_key(
    caller: Annotated[Caller, granted(Scope.PIX_READ)],
    pixKey: str,
    page: Page = 1,
    size: Annotated[int, Query(ge=1, le=1000, description="items per page, at most 1000")] = 20,
    status: Status | None = None,
    type: Operation | None = None,
    startDate: Day = None,
    endDate: Day = None,
) -> JSONResponse:
    result = await transactions.by_pix_key(
        caller.rt,
        caller.account_id,
        pixKey,
        transactions.ListQuery(page, size, status, type, startDate, endDate),
    )
    return _shown(result)


def _shown(result: transactions.Page) -> JSONResponse:
    response = exact(TransactionPage.of(result))
    show_read(response, result.read)
    return response
