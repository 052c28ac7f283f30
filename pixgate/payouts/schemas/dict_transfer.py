"""POST /dict/pix bodies: a transfer to a PIX key found in the DICT.

Every 400 of the endpoint is decided here, before the service runs, so a rejected request
never reaches the DICT or the ledger. The shapes of keys and documents come from the
domain (`dict_key_type`, `is_valid_document`), the same rules every other endpoint uses.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from pixgate.core.http.schemas import DOCUMENT, Amount, ApiModel, Money, example, iso
from pixgate.core.money import to_decimal
from pixgate.core.pix.documents import is_valid_document, only_document_chars
from pixgate.core.pix.keys import DICT_KEY_FORM, DICT_KEY_PATTERN, MAX_EMAIL, dict_key_type
from pixgate.payouts.service.dict_transfer import Transfer

Ispb = Annotated[str, StringConstraints(pattern=r"^\d{8}$")]


def is_uuid_v4(value: str) -> bool:
    """The canonical 36-character form with version 4 (what the spec asks of the header)."""
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return False
    return len(value) == 36 and parsed.version == 4 and str(parsed) == value.lower()


class DictPayment(BaseModel):
    currency: str = Field(description="always BRL", json_schema_extra={"enum": ["BRL"]})
    amount: Amount

    @field_validator("currency")
    @classmethod
    def _brl(cls, value: str) -> str:
        if value != "BRL":
            raise ValueError("currency must be BRL")
        return value


class DictTransferRequest(BaseModel):
    """Field names are the spec's; `paymentFlow` names the spec's unnamed categorisation field."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra=example(
            {
                "pixKey": "maria@example.com",
                "priority": "NORM",
                "description": "Pedido 981",
                "payment": {"currency": "BRL", "amount": 12.34},
            }
        ),
    )

    pixKey: str = Field(
        description="CPF (11 digits), CNPJ (14), e-mail, +55 phone or EVP (UUID)",
        json_schema_extra={"pattern": DICT_KEY_PATTERN, "maxLength": MAX_EMAIL},
    )
    creditorDocument: str | None = Field(
        default=None,
        json_schema_extra=DOCUMENT,
        description="CPF or CNPJ of the key holder, check digits verified; required for HIGH. "
        "When given and different from the DICT holder's, the transfer ends in ERROR "
        "(TAX_ID_MISMATCH) without debit.",
    )
    priority: Literal["HIGH", "NORM"] = Field(
        default="NORM", description="HIGH: settled at once; NORM: queued until `expiration`"
    )
    description: str | None = Field(default=None, max_length=140)
    paymentFlow: str | None = Field(
        default=None, max_length=100, description="free text for internal categorisation"
    )
    expiration: int = Field(
        default=600, ge=1, le=10800, description="seconds a NORM transfer may wait in the queue"
    )
    payment: DictPayment
    ispbDeny: list[Ispb] | None = Field(
        default=None, max_length=100, description="ISPBs (8 digits) the money must not go to"
    )

    @field_validator("pixKey")
    @classmethod
    def _pix_key(cls, value: str) -> str:
        if dict_key_type(value) is None:
            raise ValueError(f"pixKey must be {DICT_KEY_FORM}")
        return value

    @field_validator("creditorDocument")
    @classmethod
    def _document(cls, value: str | None) -> str | None:
        if value is None:
            return None
        document = only_document_chars(value)
        if not is_valid_document(document):
            raise ValueError("creditorDocument must be a CPF or CNPJ with valid check digits")
        return document

    @model_validator(mode="after")
    def _high_needs_document(self) -> DictTransferRequest:
        if self.priority == "HIGH" and self.creditorDocument is None:
            raise ValueError("creditorDocument is required when priority is HIGH")
        return self


TYPE_OF_STATUS: dict[str, Literal["PENDING", "COMPLETED", "ERROR"]] = {
    "PENDING": "PENDING",
    "CONFIRMED": "COMPLETED",
    "ERROR": "ERROR",
}
"""The answer's `type` for each transaction status."""


class DictPaymentAmount(ApiModel):
    amount: Money


class DictTransferResponse(ApiModel):
    """2.8. `endToEndId` is assigned at creation; the TRANSFER webhook repeats it on settlement."""

    end_to_end_id: str
    event_date: str
    id: int
    payment: DictPaymentAmount
    type: Literal["PENDING", "COMPLETED", "ERROR"]

    @classmethod
    def of(cls, transfer: Transfer) -> DictTransferResponse:
        return cls(
            end_to_end_id=transfer.end_to_end_id,
            event_date=iso(transfer.processed_at or transfer.created_at) or "",
            id=transfer.id,
            payment=DictPaymentAmount(amount=to_decimal(transfer.amount)),
            type=TYPE_OF_STATUS[transfer.status],
        )
