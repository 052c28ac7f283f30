"""POST /sandbox/pix/pay and /sandbox/pix/incoming (D24): money arriving from outside.

Any authenticated account may pay any charge's code (the payer is the outside world);
`incoming` credits the caller's own account. Simple error bodies; mounted only in
sandbox mode.
"""

from __future__ import annotations

from decimal import Decimal

from fastapi import APIRouter, Depends
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from pixgate.api.deps import CurrentAccount, RuntimeDep, sandbox_only
from pixgate.api.schemas.errors import SimpleError
from pixgate.services import charges

router = APIRouter(
    tags=["sandbox"],
    dependencies=[Depends(sandbox_only)],
    responses={
        400: {"model": SimpleError},
        401: {"model": SimpleError},
    },
)


class SandboxPayer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=140)
    document: str = Field(min_length=11, max_length=18, description="CPF or CNPJ")


class SandboxPayRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pixCode: str = Field(min_length=1, max_length=512)
    payer: SandboxPayer
    paidAt: AwareDatetime | None = Field(default=None, description="may lie in the past")


class SandboxIncomingRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: Decimal = Field(description="BRL, at least 0.01, at most 2 decimals")
    payer: SandboxPayer
    paidAt: AwareDatetime | None = Field(default=None, description="may lie in the past")


class Received(BaseModel):
    transactionId: str
    endToEndId: str


def _received(received: charges.Received) -> dict[str, str]:
    return {"transactionId": str(received.transaction_id),
            "endToEndId": received.end_to_end_id}


def _payer(payer: SandboxPayer) -> charges.Payer:
    return charges.Payer(name=payer.name, document=payer.document)


@router.post(
    "/sandbox/pix/pay",
    status_code=201,
    response_model=Received,
    summary="Pay a cash-in charge or cob by its copy-and-paste code",
    responses={409: {"model": SimpleError}, 422: {"model": SimpleError}},
)
async def pay(body: SandboxPayRequest, rt: RuntimeDep, who: CurrentAccount) -> dict[str, str]:
    received = await charges.sandbox_pay(rt, body.pixCode, _payer(body.payer), paid_at=body.paidAt)
    return _received(received)


@router.post(
    "/sandbox/pix/incoming",
    status_code=201,
    response_model=Received,
    summary="Receive a PIX without a charge",
)
async def incoming(
    body: SandboxIncomingRequest, rt: RuntimeDep, who: CurrentAccount
) -> dict[str, str]:
    received = await charges.sandbox_incoming(
        rt, who.account_id, body.value, _payer(body.payer), paid_at=body.paidAt
    )
    return _received(received)
