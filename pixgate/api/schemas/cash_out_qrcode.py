"""POST /api/pix/cash-out-qrcode bodies (4.4, 2.5)."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field


class QrCashOutRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: Decimal = Field(description="BRL; equal to the code's amount when it has one")
    qrCode: str = Field(min_length=50, max_length=500, pattern=r"^000201",
                        description="EMV BR Code (copy-and-paste string)")
    externalId: str = Field(min_length=1, max_length=255, description="unique per account")
    description: str | None = Field(default=None, max_length=140)
    name: str | None = Field(default=None, max_length=100, description="recipient name")
    document: str | None = Field(default=None, max_length=18, description="recipient CPF/CNPJ")


class QrCashOutResponse(BaseModel):
    transactionId: str
    externalId: str
    status: str
    generateTime: str
