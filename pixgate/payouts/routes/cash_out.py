"""POST /api/pix/cash-out: parse, call the service, shape 2.2."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core import errors
from pixgate.core.http.errors import EnvelopeRoute, openapi_responses
from pixgate.core.http.responses import JSONResponse
from pixgate.payouts.schemas.cash_out import CashOutRequest, CashOutResponse
from pixgate.payouts.service import cash_out

router = APIRouter(route_class=EnvelopeRoute, tags=["cash-out"])


@router.post(
    "/api/pix/cash-out",
    status_code=201,
    response_model=CashOutResponse,
    summary="Send a PIX to a key",
    responses=openapi_responses(
        errors.ValidationFailed,
        errors.InvalidAmount,
        errors.InvalidPixKey,
        errors.InsufficientBalance,
        errors.TransactionLimitExceeded,
        errors.DailyLimitExceeded,
        errors.NightLimitExceeded,
        errors.DuplicateExternalId,
        errors.ProviderUnavailable,
        errors.TryAgain,
        errors.DatabaseUnavailable,
    ),
)
async def create_cash_out(
    body: CashOutRequest,
    caller: Annotated[Caller, granted(Scope.PIX_WRITE, scenario=True)],
) -> JSONResponse:
    created = await cash_out.create(
        caller.rt,
        caller.account_id,
        cash_out.CashOutOrder(
            value=body.value,
            external_id=body.externalId,
            description=body.description,
            key=body.details.key,
            key_type=body.details.keyType,
            name=body.details.name,
            document=body.details.document,
            check_document=body.details.checkPixKeyWithDocument,
        ),
        instructions=caller.instructions,
    )
    return CashOutResponse.answer(created)
