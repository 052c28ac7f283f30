"""Wire shapes of the webhook configuration, resend, the
event list, and the payloads POSTed to receivers for the OpenAPI document."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pixgate.core.http.schemas import ApiModel
from pixgate.core.masking import HIDDEN_HEADER_VALUE
from pixgate.ledger.public import PageMetadata
from pixgate.webhooks.rules import event_facts as facts
from pixgate.webhooks.rules import payloads
from pixgate.webhooks.rules import webhooks as rules

# --- configuration ------------------------------------------------------------------------


class WebhookHeader(BaseModel):
    key: str = Field(min_length=1, max_length=rules.MAX_HEADER_NAME_LENGTH)
    value: str = Field(max_length=rules.MAX_HEADER_VALUE_LENGTH)


class WebhookCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "url": "https://example.com/pix/webhook",
                    "eventType": "cash_out",
                    "headers": [{"key": "X-Api-Key", "value": "my-secret"}],
                    "version": "v1",
                }
            ]
        }
    )

    # Checked by the service (WEBHOOK_INVALID_CONFIGURATION), described here.
    url: str = Field(
        min_length=1,
        description="HTTPS URL of a public host",
        json_schema_extra={"format": "uri", "maxLength": rules.MAX_URL_LENGTH},
    )
    eventType: str = Field(
        description="one of " + ", ".join(rules.EVENT_TYPES),
        json_schema_extra={"enum": list(rules.EVENT_TYPES)},
    )
    headers: list[WebhookHeader] = Field(
        default_factory=list,
        description="at most 5; blocked names: " + ", ".join(sorted(rules.BLOCKED_HEADER_NAMES)),
        json_schema_extra={"maxItems": rules.MAX_HEADERS},
    )
    version: str = Field(
        default="v1",
        description="payload version, v1 or v2; MED events have no v2",
        json_schema_extra={"enum": list(rules.VERSIONS)},
    )


class WebhookCreated(ApiModel):
    success: bool
    message: str


class WebhookItem(ApiModel):
    id: int
    type: str
    url: str
    headers: dict[str, str] = Field(
        description="custom headers by name; every value shows as "
        f"`{HIDDEN_HEADER_VALUE}` (it is often the receiver's credential)"
    )
    is_active: bool
    created_at: str
    version: str


class WebhookList(ApiModel):
    account_id: int
    webhooks: list[WebhookItem]
    total: int
    enabled: bool = Field(
        default=True,
        description="false while the operator has not turned this API on: the list is then "
        "empty whatever is configured, and `message` says how to turn it on",
    )
    message: str | None = Field(
        default=None, description="why the list is empty, while `enabled` is false"
    )


# --- resend and events --------------------------------------------------------------------


class ResendRequest(BaseModel):
    url: str | None = Field(
        default=None,
        description="temporary destination (HTTPS, public host); not persisted",
        json_schema_extra={"format": "uri"},
    )


class ResendResponse(ApiModel):
    message: str
    webhook_log_id: int
    sent_at: str
    status_code: int | None = Field(
        description="HTTP status of the destination; null when it did not answer"
    )


class EventItem(ApiModel):
    id: str = Field(description="`evt_<n>`; resend it with POST /api/resend-webhook/evt_<n>")
    type: str
    transaction_id: str | None
    created_at: str
    delivery_state: Literal["delivered", "pending", "failed", "none"]


class EventList(ApiModel):
    data: list[EventItem]
    metadata: PageMetadata


# --- payloads (documentation of what receivers get) ---------------------------------------


class Bank(BaseModel):
    bankISPB: str | None
    bankName: str | None
    bankCode: str | None
    accountBranch: str | None
    accountNumber: str | None


class Counterpart(BaseModel):
    name: str | None
    document: str | None = Field(description="masked")
    bank: Bank


class V1Payload(BaseModel):
    """The public family's flat payload (the same fields for the other events; docs/webhooks.md)."""

    event: Literal[
        "CashIn", "CashOut", "RefundIn", "RefundOut", "MedCreated", "MedAccepted", "MedRejected"
    ]
    status: Literal["PENDING", "CONFIRMED", "ERROR"]
    transactionType: Literal["PIX"]
    movementType: Literal["CREDIT", "DEBIT"]
    transactionId: str
    externalId: str | None
    endToEndId: str | None
    pixKey: str | None
    feeAmount: float
    originalAmount: float
    finalAmount: float
    processingDate: str
    errorCode: str | None
    errorMessage: str | None
    counterpart: Counterpart
    metadata: dict[str, Any] = Field(description="eventId, occurredAt and producer metadata")
    med: dict[str, Any] | None = Field(default=None, description="MED events: a GET /api/med item")


class Payment(BaseModel):
    amount: str
    currency: str


class V2Error(BaseModel):
    code: str | None
    message: str | None


class CreditorAccount(BaseModel):
    name: str | None
    document: str | None
    ispb: str | None


class TransferData(BaseModel):
    id: int
    txId: str | None
    pixKey: str | None
    status: Literal["LIQUIDATED", "ERROR", "PENDING"]
    payment: Payment
    endToEndId: str | None
    creditDebitType: Literal["DEBIT"]
    idempotencyKey: str | None
    creditorAccount: CreditorAccount
    remittanceInformation: str | None
    error: V2Error | None = Field(default=None, description="present when status is ERROR")


class V2Transfer(BaseModel):
    type: Literal["TRANSFER"]
    data: TransferData


class DebtorAccount(BaseModel):
    name: str | None
    document: str | None


class ReceiveData(BaseModel):
    id: int
    txId: str | None
    status: Literal["LIQUIDATED", "ERROR", "PENDING"]
    payment: Payment
    endToEndId: str | None
    debtorAccount: DebtorAccount


class V2Receive(BaseModel):
    type: Literal["RECEIVE"]
    data: ReceiveData


class RefundPayment(BaseModel):
    amount: float
    currency: str


class RefundItem(BaseModel):
    status: str
    payment: RefundPayment
    endToEndId: str | None
    eventDate: str
    information: str | None


class RefundData(BaseModel):
    id: int
    txId: str | None
    status: Literal["REFUNDED", "ERROR", "PENDING"]
    payment: Payment
    refunds: list[RefundItem]
    endToEndId: str | None
    creditDebitType: Literal["DEBIT", "CREDIT"]
    error: V2Error | None = None


class V2Refund(BaseModel):
    type: Literal["REFUND"]
    data: RefundData


# --- examples, rendered by the code that renders real payloads ----------------------------

_AT = datetime(2026, 11, 22, 14, 3, 7, 412000, tzinfo=UTC)
_PAYER = facts.CounterpartFacts(
    name="Maria Souza",
    document="12345678909",
    ispb="60701190",
    bank_name="ITAU UNIBANCO S.A.",
    bank_code="341",
    branch="0001",
    account_number="123456",
)
_CASH_OUT = facts.PaymentFacts(
    id=1042,
    transaction_id="7d1f3c1e-5f0b-4c52-9a57-0c6f0f8c2a11",
    operation="WITHDRAW",
    status="CONFIRMED",
    amount=12345,
    fee=50,
    external_id="order-981",
    end_to_end_id="E12345678202611221403AbCdEf12345",
    idempotency_key="5b8f0a54-2f7e-4a8e-9d2c-1f1f7c3a9b10",
    pix_key="maria@example.com",
    description="Pedido 981",
    counterpart=_PAYER,
    processed_at=_AT,
)
_CASH_IN = facts.PaymentFacts(
    id=1043,
    transaction_id="a3c5e7f9-1b2d-4f6a-8c0e-2d4f6a8c0e13",
    operation="PAYMENT",
    status="CONFIRMED",
    amount=5000,
    external_id="invoice-77",
    end_to_end_id="E60701190202611221403XyZ98765432",
    description="Fatura 77",
    txid="7f3k2p9q8r1s4t6u5v0w3x2y1z",
    counterpart=_PAYER,
    processed_at=_AT,
)
_REFUND_IN = replace(
    _CASH_IN,
    id=1044,
    transaction_id="c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
    operation="REFUND_IN",
    external_id="refund-77-1",
    amount=2000,
    end_to_end_id="D12345678202611221410Rf00000001",
    description="Devolucao parcial",
    txid=None,
)
_REFUND_OUT = replace(
    _CASH_OUT,
    id=1045,
    transaction_id="e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7a8b",
    operation="REFUND_OUT",
    amount=1000,
    fee=0,
    end_to_end_id="D60701190202611221420Rt00000002",
    description="Devolucao",
)
_SAMPLES: dict[str, tuple[facts.PaymentFacts, facts.PaymentFacts | None]] = {
    "cash_out": (_CASH_OUT, None),
    "cash_in": (_CASH_IN, None),
    "refund_in": (_REFUND_IN, _CASH_IN),
    "refund_out": (_REFUND_OUT, _CASH_OUT),
}
"""Each event type's payment and, for a refund, the payment it returns; MED events report
a cash-in."""


def _med_case(event_type: str) -> dict[str, Any]:
    return {
        "id": 31,
        "endToEnd": _CASH_IN.end_to_end_id,
        "status": "ANALYZED" if event_type != "med_created" else "RECEIVED",
        "reason": "REFUND_REQUEST",
        "cause": "SOCIAL_ENGINEERING",
        "description": "Pagamento feito sob ameaça",
        "analysisResult": {"med_accepted": "APPROVED", "med_rejected": "REJECTED"}.get(event_type),
        "analysisDetails": None,
        "requestingBank": {"ispb": "60701190", "name": "Banco Pagador"},
        "contestedBank": {"ispb": "12345678", "name": "pixgate"},
        "originalTransaction": {
            "amount": 150.0,
            "type": "PIX",
            "transactionType": "CASH_IN",
            "name": "Maria Souza",
            "document": "***.982.247-**",
            "dateTime": "2026-11-22T13:58:41Z",
        },
        "isReconciled": True,
        "originalTransactionId": _CASH_IN.id,
        "blockedAmount": 150.0,
        "createdAt": "2026-11-22T14:03:07Z",
        "updatedAt": "2026-11-22T14:03:07Z",
    }


def sample_event(event_type: str, *, status: str = "CONFIRMED") -> facts.EventFacts:
    """A realistic event of each type, for the OpenAPI examples and docs/webhooks.md."""
    payment, original = _SAMPLES.get(event_type, (_CASH_IN, None))
    if status == "ERROR":
        payment = replace(
            payment,
            status="ERROR",
            error_code="ORDER_REJECTED",
            error_message="destination bank rejected the payment",
            end_to_end_id=None,
        )
    return facts.EventFacts(
        id=7310,
        type=event_type,
        created_at=datetime(2026, 11, 22, 14, 3, 7, tzinfo=UTC),
        payment=payment,
        original=original,
        med=_med_case(event_type) if event_type.startswith("med_") else None,
    )


def example(event_type: str, version: str, *, status: str = "CONFIRMED") -> dict[str, Any]:
    return payloads.render(sample_event(event_type, status=status), version)


PAYLOAD_MODELS: dict[str, type[BaseModel]] = {
    "v1": V1Payload,
    "TRANSFER": V2Transfer,
    "RECEIVE": V2Receive,
    "REFUND": V2Refund,
}
"""Kept so the OpenAPI document and the tests validate real renders against the models."""
