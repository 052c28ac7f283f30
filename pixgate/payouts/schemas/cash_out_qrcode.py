"""POST /api/pix/cash-out-qrcode bodies."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pixgate.core.http.schemas import DOCUMENT, PixAmount, example
from pixgate.core.pix import brcode
from pixgate.payouts.schemas.cash_out import CashOutResponse

EXAMPLE_CODE = brcode.encode(brcode.static("loja@example.com", "Loja Exemplo", "Sao Paulo", 1000))
"""A static code paying 10.00 to a PIX key, as a bank app would scan it."""


class QrCashOutRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=example(
            {
                "value": 10,
                "qrCode": EXAMPLE_CODE,
                "externalId": "qr-981",
                "description": "Pedido 981",
            }
        ),
    )

    value: PixAmount = Field(
        description="BRL, from 0.01 to 9999999999.99 with at most 2 decimals; equal to the "
        "code's amount when it has one"
    )
    qrCode: str = Field(
        min_length=50,
        max_length=500,
        pattern=r"^000201",
        description="EMV BR Code (copy-and-paste string)",
    )
    externalId: str = Field(min_length=1, max_length=255, description="unique per account")
    description: str | None = Field(default=None, max_length=140)
    name: str | None = Field(default=None, max_length=100, description="recipient name")
    document: str | None = Field(
        default=None, max_length=18, json_schema_extra=DOCUMENT, description="recipient CPF/CNPJ"
    )


class QrCashOutResponse(CashOutResponse):
    """The same members as the cash-out's answer."""
