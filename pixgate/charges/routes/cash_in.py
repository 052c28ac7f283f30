"""POST /api/pix/cash-in: parse, call the service, shape 2.3."""

from __future__ import annotations

import base64
import io
from typing import Annotated

import segno
from fastapi import APIRouter

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.charges.schemas.cash_in import (
    CashInPayer,
    CashInRequest,
    CashInResponse,
    CashInTransaction,
)
from pixgate.charges.service import cash_in
from pixgate.core import errors
from pixgate.core.http.errors import EnvelopeRoute, openapi_responses
from pixgate.core.http.schemas import iso

router = APIRouter(route_class=EnvelopeRoute, tags=["cash-in"])


def qr_code_png(pix_code: str) -> bytes:
    """The code drawn as a QR (error correction M, the usual for BR Codes), a PNG."""
    buffer = io.BytesIO()
    segno.make_qr(pix_code, error="m").save(buffer, kind="png", scale=6, border=4)
    return buffer.getvalue()


def qr_code_image(pix_code: str) -> str:
    """The QR of `qr_code_png` in a PNG data URI."""
    return "data:image/png;base64," + base64.b64encode(qr_code_png(pix_code)).decode("ascii")


def cash_in_order(
    tx: CashInTransaction,
    payer: CashInPayer,
    *,
    additional_info: dict[str, str] | None = None,
    splits: list[cash_in.SplitOrder] | None = None,
) -> cash_in.CashInOrder:
    """The service's order for a validated charge, however it came (the API's body, the
    dashboard's form): one mapping of the wire fields, so the two cannot differ."""
    return cash_in.CashInOrder(
        value=tx.value,
        description=tx.description,
        external_id=tx.externalId,
        expiration_time=tx.expirationTime,
        payer_name=payer.fullName,
        payer_document=payer.document,
        additional_info=additional_info or {},
        splits=splits or [],
    )


@router.post(
    "/api/pix/cash-in",
    status_code=201,
    response_model=CashInResponse,
    response_model_exclude_none=True,
    summary="Create a charge (dynamic QR code / copy-and-paste code)",
    responses=openapi_responses(
        errors.ValidationFailed,
        errors.ProviderExpirationBelowMinimum,
        errors.DuplicateExternalId,
        errors.ProviderUnavailable,
    ),
)
async def create_cash_in(
    body: CashInRequest,
    caller: Annotated[Caller, granted(Scope.COB_WRITE, scenario=True)],
) -> CashInResponse:
    splits = [
        cash_in.SplitOrder(
            pix_key=s.pixKey,
            pix_key_type=s.pixKeyType,
            name=s.name,
            document=s.document,
            type=s.type,
            value=s.value,
            immediate=s.immediate,
        )
        for s in body.splits
    ]
    created = await cash_in.create(
        caller.rt,
        caller.account_id,
        cash_in_order(
            body.transaction, body.payer, additional_info=body.additionalInfo, splits=splits
        ),
        instructions=caller.instructions,
    )
    return CashInResponse(
        transaction_id=str(created.transaction_id),
        correlation_id=str(created.correlation_id),
        external_id=created.external_id,
        status=created.status,
        pix_code=created.pix_code,
        generate_time=iso(created.created_at) or "",
        expiration_date=iso(created.expires_at) or "",
        qr_code_image=qr_code_image(created.pix_code) if body.transaction.generateQrCode else None,
    )
