"""POST /api/pix/cash-out bodies.

A bad amount answers PIX_INVALID_AMOUNT (`PixAmount`), and key rules are the service's, so
they answer PIX_INVALID_PIX_KEY rather than a generic field error.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pixgate.core.http.responses import JSONResponse
from pixgate.core.http.schemas import DOCUMENT, EXAMPLE_CPF, BuiltModel, PixAmount, example, iso
from pixgate.core.pix.keys import KeyType
from pixgate.payouts.service.outgoing import CashOut


class CashOutDetails(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1, max_length=77)
    keyType: KeyType
    name: str = Field(min_length=1, max_length=100)
    document: str = Field(
        min_length=1,
        max_length=18,
        json_schema_extra=DOCUMENT,
        description="CPF (11 digits) or CNPJ (14 characters) of the holder; `.`, `-`, `/` "
        "and spaces are ignored",
    )
    checkPixKeyWithDocument: bool = False


class CashOutRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=example(
            {
                "value": 10.5,
                "externalId": "order-981",
                "description": "Pedido 981",
                "details": {
                    "key": "123e4567-e12b-42d3-a456-426614174000",
                    "keyType": "RANDOM",
                    "name": "Maria Souza",
                    "document": EXAMPLE_CPF,
                },
            }
        ),
    )

    value: PixAmount
    externalId: str = Field(min_length=1, max_length=255)
    description: str | None = Field(default=None, max_length=140)
    details: CashOutDetails


class CashOutResponse(BuiltModel):
    transaction_id: str
    external_id: str
    status: str
    generate_time: str

    @staticmethod
    def answer(created: CashOut) -> JSONResponse:
        """The 201 written straight from the payout, byte for byte what FastAPI would render
        from this model (tests/payouts/test_cash_out_answer.py): the cash-out is the hottest
        route, and validating then dumping the model cost it 2 % of its instructions. The
        model stays the answer's declared schema (OpenAPI, the client's reader)."""
        return JSONResponse(
            {
                "transactionId": str(created.transaction_id),
                "externalId": created.external_id,
                "status": created.status,
                "generateTime": iso(created.created_at),
            },
            status_code=201,
        )
