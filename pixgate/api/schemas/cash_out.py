"""POST /api/pix/cash-out bodies (4.2, 2.2).

Amount and key rules are the service's, so they answer their own codes
(PIX_INVALID_AMOUNT, PIX_INVALID_PIX_KEY) rather than a generic field error.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from pixgate.domain.pix_keys import KeyType


class CashOutDetails(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1, max_length=77)
    keyType: KeyType
    name: str = Field(min_length=1, max_length=100)
    document: str = Field(min_length=1, max_length=18, description="CPF or CNPJ of the holder")
    checkPixKeyWithDocument: bool = False


class CashOutRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: Decimal = Field(description="BRL, at least 0.01, at most 2 decimals")
    externalId: str = Field(min_length=1, max_length=255)
    description: str | None = Field(default=None, max_length=140)
    details: CashOutDetails


class CashOutResponse(BaseModel):
    transactionId: str
    externalId: str
    status: str
    generateTime: str
