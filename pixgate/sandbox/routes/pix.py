"""POST /sandbox/pix/pay, /sandbox/pix/incoming and /sandbox/pix/{transactionId}/refund-out
(sandbox mode only): money arriving from outside.

Any authenticated account may pay any charge's code (the payer is the outside world);
`incoming` credits the caller's own account; `refund-out` is the receiver of one of the
caller's cash-outs returning money. General error envelope; mounted only in
sandbox mode.
"""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path

from pixgate.accounts.public import Caller, Scope, granted, sandbox_only
from pixgate.charges.public import charges_service as charges
from pixgate.core.http.error_schemas import ApiError
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.responses import JSONResponse, exact
from pixgate.core.http.schemas import iso
from pixgate.core.money import to_decimal
from pixgate.refunds.public import RefundOutRequest, RefundOutResponse
from pixgate.refunds.public import service as refunds
from pixgate.sandbox.schemas import (
    Received,
    SandboxIncomingRequest,
    SandboxPayer,
    SandboxPayRequest,
)

router = APIRouter(
    route_class=PixgateRoute,
    tags=["sandbox"],
    dependencies=[Depends(sandbox_only)],
    responses={
        400: {"model": ApiError},
        401: {"model": ApiError},
    },
)


def _received(received: charges.Received) -> Received:
    return Received(
        transaction_id=str(received.transaction_id), end_to_end_id=received.end_to_end_id
    )


def _payer(payer: SandboxPayer, message: str | None) -> charges.Payer:
    return charges.Payer(name=payer.name, document=payer.document, message=message)


@router.post(
    "/sandbox/pix/pay",
    status_code=201,
    response_model=Received,
    summary="Pay a cash-in charge or cob by its copy-and-paste code",
    responses={409: {"model": ApiError}, 422: {"model": ApiError}},
)
async def pay(
    body: SandboxPayRequest,
    caller: Annotated[Caller, granted(Scope.COB_WRITE)],
) -> Received:
    received = await charges.sandbox_pay(
        caller.rt, body.pixCode, _payer(body.payer, body.infoPagador), paid_at=body.paidAt
    )
    return _received(received)


@router.post(
    "/sandbox/pix/incoming",
    status_code=201,
    response_model=Received,
    summary="Receive a PIX without a charge",
)
async def incoming(
    body: SandboxIncomingRequest,
    caller: Annotated[Caller, granted(Scope.PIX_WRITE)],
) -> Received:
    received = await charges.sandbox_incoming(
        caller.rt,
        caller.account_id,
        body.value,
        _payer(body.payer, body.infoPagador),
        paid_at=body.paidAt,
        key=body.chave,
    )
    return _received(received)


@router.post(
    "/sandbox/pix/{transactionId}/refund-out",
    status_code=201,
    response_model=RefundOutResponse,
    summary="The receiver of a cash-out returns money (a refund received)",
    responses={404: {"model": ApiError}},
)
async def refund_out(
    original: Annotated[
        uuid.UUID, Path(alias="transactionId", description="transactionId of the cash-out")
    ],
    body: RefundOutRequest,
    caller: Annotated[Caller, granted(Scope.PIX_WRITE)],
) -> JSONResponse:
    refund = await refunds.refund_out(caller.rt, caller.account_id, original, body.value)
    assert refund.end_to_end_id is not None
    answer = RefundOutResponse(
        transaction_id=str(refund.transaction_id),
        end_to_end_id=refund.end_to_end_id,
        status="CONFIRMED",
        value=to_decimal(refund.amount),
        generate_time=iso(refund.created_at) or "",
    )
    return exact(answer, status_code=201)
