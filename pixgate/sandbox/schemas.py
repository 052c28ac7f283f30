"""Bodies of POST /sandbox/pix/pay and /sandbox/pix/incoming (sandbox mode only)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pixgate.core.http.schemas import (
    DOCUMENT,
    EXAMPLE_PAYER,
    Amount,
    ApiModel,
    AwareTimestamp,
    example,
)
from pixgate.core.pix.keys import MAX_EMAIL
from pixgate.payouts.public import EXAMPLE_CODE


class SandboxPayer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=140)
    document: str = Field(
        min_length=11,
        max_length=18,
        json_schema_extra=DOCUMENT,
        description="CPF or CNPJ with valid check digits",
    )


class SandboxPayRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=example(
            {
                "pixCode": EXAMPLE_CODE,
                "payer": EXAMPLE_PAYER,
            }
        ),
    )

    pixCode: str = Field(min_length=1, max_length=512)
    payer: SandboxPayer
    paidAt: AwareTimestamp | None = Field(default=None, description="may lie in the past")
    infoPagador: str | None = Field(
        default=None, max_length=140, description="the payer's message to the receiver"
    )


class SandboxIncomingRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=example(
            {
                "value": 25,
                "payer": EXAMPLE_PAYER,
            }
        ),
    )

    value: Amount
    payer: SandboxPayer
    paidAt: AwareTimestamp | None = Field(default=None, description="may lie in the past")
    chave: str | None = Field(
        default=None,
        max_length=MAX_EMAIL,
        description="the key of the account that receives it; absent: the account's first",
    )
    infoPagador: str | None = Field(
        default=None, max_length=140, description="the payer's message to the receiver"
    )


class Received(ApiModel):
    transaction_id: str
    end_to_end_id: str
