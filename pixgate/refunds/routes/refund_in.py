"""POST /api/pix/refund-in/{id}: refund a received PIX, in full or in part.

General error envelope. The refund is PENDING until the settling bank returns the money;
its result arrives by the `refund_in` webhook.
"""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core import errors
from pixgate.core.http.errors import Family, openapi_responses
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.responses import JSONResponse, exact
from pixgate.core.http.schemas import iso
from pixgate.core.money import to_decimal
from pixgate.refunds import service as refunds
from pixgate.refunds.schemas import RefundInRequest, RefundInResponse

router = APIRouter(route_class=PixgateRoute, tags=["refunds"])


@router.post(
    "/api/pix/refund-in/{id}",
    status_code=201,
    response_model=RefundInResponse,
    summary="Refund a received PIX",
    responses=openapi_responses(
        errors.ValidationFailed,
        errors.RefundAmountExceeded,
        errors.RefundDeadlineExceeded,
        errors.InsufficientBalance,
        errors.DuplicateExternalId,
        errors.NotFound,
        errors.ProviderUnavailable,
        family=Family.GENERAL,
    ),
)
async def refund_in(
    original: Annotated[
        uuid.UUID, Path(alias="id", description="transactionId of the PIX received")
    ],
    body: RefundInRequest,
    caller: Annotated[Caller, granted(Scope.PIX_WRITE, scenario=True)],
) -> JSONResponse:
    order = refunds.RefundOrder(
        amount=refunds.amount_of(body.refundValue, "refundValue"),
        external_id=body.externalId or refunds.new_external_id(),
        description=body.reason,
    )
    refund = await refunds.refund_in(
        caller.rt, caller.account_id, original, order, instructions=caller.instructions
    )
    assert refund.external_id is not None and refund.provider_transaction_id is not None
    answer = RefundInResponse(
        transaction_id=str(refund.transaction_id),
        external_id=refund.external_id,
        status=refund.status,
        refund_value=to_decimal(refund.amount),
        provider_transaction_id=refund.provider_transaction_id,
        generate_time=iso(refund.created_at) or "",
    )
    return exact(answer, status_code=201)
