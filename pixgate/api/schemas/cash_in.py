"""POST /api/pix/cash-in bodies (4.3, 2.3).

Shape and lengths are checked here; amounts, documents, split keys and the splits' total
are the service's (`services.cash_in.validate`), so every failure is one 400 HTTP_ERROR
with a message array, as 7.4 says.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pixgate.domain.pix_keys import SplitKeyType


class CashInTransaction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: Decimal = Field(description="BRL, at least 0.01, at most 2 decimals")
    description: str = Field(min_length=1, max_length=140)
    externalId: str = Field(min_length=1, max_length=255, description="unique per account")
    expirationTime: int = Field(default=86400, ge=30, le=604800, description="seconds")
    generateQrCode: bool = False


class CashInPayer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fullName: str = Field(min_length=1, max_length=100)
    document: str = Field(min_length=11, max_length=18, description="CPF or CNPJ")


class CashInSplit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pixKey: str = Field(min_length=1, max_length=255)
    pixKeyType: SplitKeyType
    name: str = Field(min_length=1, max_length=255)
    document: str = Field(min_length=11, max_length=18, description="CPF or CNPJ")
    type: Literal["FIXED", "PERCENTAGE"]
    value: Decimal = Field(description="FIXED: BRL; PERCENTAGE: percent of the gross amount")
    immediate: bool = False


class CashInRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    transaction: CashInTransaction
    payer: CashInPayer
    additionalInfo: dict[str, str] = Field(default_factory=dict, max_length=10)
    splits: list[CashInSplit] = Field(default_factory=list, max_length=10)


class CashInResponse(BaseModel):
    transactionId: str
    correlationId: str
    externalId: str
    status: str
    pixCode: str
    generateTime: str
    expirationDate: str
    qrCodeImage: str | None = Field(
        default=None, description="data:image/png;base64,...; only when generateQrCode"
    )
