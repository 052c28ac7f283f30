"""Bodies of POST /sandbox/pix/pay and /sandbox/pix/incoming (D24)."""

from __future__ import annotations

from decimal import Decimal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field


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
