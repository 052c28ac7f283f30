"""POST /api/pix/cash-in bodies.

Shape, lengths and the amounts' range and spelling are checked here; documents, split keys,
the splits' places and total are the service's (`charges.service.cash_in.validate`), so every
failure is one 400 HTTP_ERROR with a message array, as 7.4 says.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pixgate.core.http.schemas import DOCUMENT, EXAMPLE_CPF, Amount, ApiModel, SplitValue, example
from pixgate.core.pix.keys import SplitKeyType


class CashInTransaction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: Amount
    description: str = Field(min_length=1, max_length=140)
    externalId: str = Field(min_length=1, max_length=255, description="unique per account")
    expirationTime: int = Field(default=86400, ge=30, le=604800, description="seconds")
    generateQrCode: bool = False


class CashInPayer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fullName: str = Field(min_length=1, max_length=100)
    document: str = Field(
        min_length=11,
        max_length=18,
        json_schema_extra=DOCUMENT,
        description="CPF or CNPJ with valid check digits",
    )


class CashInSplit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pixKey: str = Field(min_length=1, max_length=255)
    pixKeyType: SplitKeyType
    name: str = Field(min_length=1, max_length=255)
    document: str = Field(
        min_length=11,
        max_length=18,
        json_schema_extra=DOCUMENT,
        description="CPF or CNPJ with valid check digits",
    )
    type: Literal["FIXED", "PERCENTAGE"]
    value: SplitValue
    immediate: bool = False


class CashInRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=example(
            {
                "transaction": {
                    "value": 50,
                    "description": "Fatura 77",
                    "externalId": "invoice-77",
                    "expirationTime": 3600,
                    "generateQrCode": False,
                },
                "payer": {"fullName": "Maria Souza", "document": EXAMPLE_CPF},
                "additionalInfo": {"pedido": "77"},
            }
        ),
    )

    transaction: CashInTransaction
    payer: CashInPayer
    additionalInfo: dict[str, str] = Field(default_factory=dict, max_length=10)
    splits: list[CashInSplit] = Field(default_factory=list, max_length=10)


class CashInResponse(ApiModel):
    transaction_id: str
    correlation_id: str
    external_id: str
    status: str
    pix_code: str
    generate_time: str
    expiration_date: str
    qr_code_image: str | None = Field(
        default=None, description="data:image/png;base64,...; only when generateQrCode"
    )
