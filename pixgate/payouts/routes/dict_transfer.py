"""POST /dict/pix: Central-Bank-style transfer to a DICT key; 201, simple error body.

A repeat of `x-idempotency-key` answers 201 again with the same transfer (as it is now)
and the header `Idempotent-Replayed: true`, so a client retrying after a timeout gets
the answer it missed; the same key with a different body is a 422.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core import errors
from pixgate.core.http.error_schemas import SimpleError
from pixgate.core.http.errors import CentralBankRoute, Family, answering, openapi_responses
from pixgate.core.http.responses import JSONResponse, exact
from pixgate.core.money import to_cents
from pixgate.payouts.schemas.dict_transfer import (
    DictTransferRequest,
    DictTransferResponse,
    is_uuid_v4,
)
from pixgate.payouts.service import dict_transfer

router = APIRouter(
    route_class=answering(
        CentralBankRoute, {errors.InsufficientBalance: errors.DictTransferInsufficientBalance}
    ),
    tags=["dict"],
    responses={401: {"model": SimpleError}},
)

UUID_V4 = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
_IDEMPOTENCY_HEADER: dict[str, Any] = {
    # Read by `idempotency_key`, which answers its own 400 before the body is looked at, so
    # FastAPI does not see it as required: declared here, required for every transfer.
    "parameters": [
        {
            "name": "x-idempotency-key",
            "in": "header",
            "required": True,
            "description": "UUID v4; a repeat answers the same transfer, with "
            "`Idempotent-Replayed: true`",
            "schema": {"type": "string", "format": "uuid", "pattern": UUID_V4},
        }
    ]
}


async def idempotency_key(
    x_idempotency_key: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> uuid.UUID:
    """Checked before the body, so a request without a key never does anything else."""
    if x_idempotency_key is None:
        raise errors.ValidationFailed(["x-idempotency-key: required header is missing"])
    if not is_uuid_v4(x_idempotency_key):
        raise errors.ValidationFailed(["x-idempotency-key: must be a UUID v4"])
    return uuid.UUID(x_idempotency_key)


@router.post(
    "/dict/pix",
    status_code=201,
    response_model=DictTransferResponse,
    summary="Transfer to a PIX key (DICT)",
    openapi_extra=_IDEMPOTENCY_HEADER,
    responses=openapi_responses(
        errors.ValidationFailed,
        errors.InvalidPixKey,
        errors.DictKeyNotFound,
        errors.IspbDenied,
        errors.DictTransferInsufficientBalance,
        errors.IdempotencyKeyReused,
        errors.ProviderUnavailable,
        family=Family.CENTRAL_BANK,
    ),
)
async def create_transfer(
    body: DictTransferRequest,
    caller: Annotated[Caller, granted(Scope.PIX_WRITE, scenario=True)],
    key: Annotated[uuid.UUID, Depends(idempotency_key)],
) -> JSONResponse:
    order = dict_transfer.TransferOrder(
        pix_key=body.pixKey,
        amount=to_cents(body.payment.amount),
        priority=body.priority,
        expiration=body.expiration,
        creditor_document=body.creditorDocument,
        description=body.description,
        payment_flow=body.paymentFlow,
        ispb_deny=tuple(body.ispbDeny) if body.ispbDeny is not None else None,
    )
    transfer = await dict_transfer.create(
        caller.rt, caller.account_id, order, idempotency_key=key, instructions=caller.instructions
    )
    answer = exact(DictTransferResponse.of(transfer), status_code=201)
    if transfer.replayed:
        answer.headers["Idempotent-Replayed"] = "true"
    return answer
