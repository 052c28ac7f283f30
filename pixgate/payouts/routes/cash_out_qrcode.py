"""POST /api/pix/cash-out-qrcode: parse, call the service, answer; errors carry only a status."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core.errors import DuplicateExternalId, ExternalIdConflict
from pixgate.core.http.error_schemas import ApiError
from pixgate.core.http.errors import answering
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.responses import JSONResponse
from pixgate.payouts.schemas.cash_out_qrcode import QrCashOutRequest, QrCashOutResponse
from pixgate.payouts.service import cash_out_qrcode

router = APIRouter(
    route_class=answering(PixgateRoute, {DuplicateExternalId: ExternalIdConflict}),
    tags=["cash-out"],
)


@router.post(
    "/api/pix/cash-out-qrcode",
    status_code=201,
    response_model=QrCashOutResponse,
    summary="Pay a QR code (BR Code copy-and-paste string)",
    responses={
        400: {
            "model": ApiError,
            "description": "invalid data or QR code, mismatched "
            "amount, insufficient balance, own charge",
        },
        401: {"model": ApiError},
        409: {"model": ApiError, "description": "externalId already used"},
        500: {"model": ApiError},
        503: {"model": ApiError, "description": "TRY_AGAIN: a concurrent change was met"},
    },
)
async def create_qr_cash_out(
    body: QrCashOutRequest,
    caller: Annotated[Caller, granted(Scope.PIX_WRITE, scenario=True)],
) -> JSONResponse:
    created = await cash_out_qrcode.create(
        caller.rt,
        caller.account_id,
        cash_out_qrcode.QrCashOutOrder(
            value=body.value,
            qr_code=body.qrCode,
            external_id=body.externalId,
            description=body.description,
            name=body.name,
            document=body.document,
        ),
        instructions=caller.instructions,
    )
    return QrCashOutResponse.answer(created)
