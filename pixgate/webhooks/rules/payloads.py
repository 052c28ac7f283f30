"""What a webhook says: the v1 and v2 payloads, rendered from an event's facts.

Payloads are rendered from an `EventFacts` only (`webhooks/rules/event_facts.py`: the payment as it
was when the event was recorded), so every retry and every resend of one event carries the
same facts, a v1 URL and a v2 URL receive the same facts in their two shapes, and renaming
a column of `transactions` changes no payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pixgate.core.labels import MOVEMENT_TYPES
from pixgate.core.masking import mask_document
from pixgate.core.money import format_amount, to_cents, to_decimal
from pixgate.webhooks.rules.event_facts import CounterpartFacts, EventFacts, PaymentFacts
from pixgate.webhooks.rules.webhooks import V1_EVENT_NAMES, EventType, WebhookVersion


def render(event: EventFacts, version: str) -> dict[str, Any]:
    """The body POSTed to a URL of `version` for this event."""
    if version == WebhookVersion.V2:
        return _render_v2(event)
    return _render_v1(event)


def _iso(at: datetime | None) -> str | None:
    """A time as ISO 8601 UTC with `Z`."""
    if at is None:
        return None
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _counterpart(counterpart: CounterpartFacts) -> dict[str, Any]:
    return {
        "name": counterpart.name,
        "document": mask_document(counterpart.document),
        "bank": {
            "bankISPB": counterpart.ispb,
            "bankName": counterpart.bank_name,
            "bankCode": counterpart.bank_code,
            "accountBranch": counterpart.branch,
            "accountNumber": counterpart.account_number,
        },
    }


def _render_v1(event: EventFacts) -> dict[str, Any]:
    """The flat public-family shape: 6.3 for cash-out, the same fields for the others."""
    payment = event.payment
    movement = MOVEMENT_TYPES.get(payment.operation or "", "DEBIT")
    # a refund's providerTransactionId, answered at creation, correlates its webhook
    provider_id = payment.provider_transaction_id
    correlation = {"providerTransactionId": provider_id} if provider_id else {}
    final = payment.amount + payment.fee if movement == "DEBIT" else payment.amount - payment.fee
    body: dict[str, Any] = {
        "event": V1_EVENT_NAMES[event.type],
        "status": payment.status,
        "transactionType": "PIX",
        "movementType": movement,
        "transactionId": payment.transaction_id,
        "externalId": payment.external_id,
        "endToEndId": payment.end_to_end_id,
        "pixKey": payment.pix_key,
        "feeAmount": to_decimal(payment.fee),
        "originalAmount": to_decimal(payment.amount),
        "finalAmount": to_decimal(final),
        "processingDate": _iso(payment.processed_at) or _iso(event.created_at),
        "errorCode": payment.error_code,
        "errorMessage": payment.error_message,
        "counterpart": _counterpart(payment.counterpart),
        "metadata": {
            "eventId": event.public_id,
            "occurredAt": _iso(event.created_at),
            **correlation,
            **event.metadata,
        },
    }
    if event.type.startswith("med_"):
        if event.med is None:
            raise ValueError(f"the MED event {event.public_id} has no MED case")
        body["med"] = _med(event.med)
    return body


def _med(case: Mapping[str, Any]) -> dict[str, Any]:
    """The MED case stored with its event. Its amounts come back from jsonb as floats (exact
    to the cent in their range), and are written with two decimals again, as on every answer."""
    original = case.get("originalTransaction")
    return dict(case) | {
        "blockedAmount": to_decimal(to_cents(case["blockedAmount"])),
        "originalTransaction": original
        and original | {"amount": to_decimal(to_cents(original["amount"]))},
    }


def _payment(cents: int) -> dict[str, str]:
    return {"amount": format_amount(cents), "currency": "BRL"}


def _txid(event: EventFacts, payment: PaymentFacts) -> str | None:
    """`txId`: the one the producer passed with the event, else the payment's own."""
    return event.tx_id or payment.txid


def _with_error(data: dict[str, Any], payment: PaymentFacts, ok_status: str) -> dict[str, Any]:
    """A failed operation reports status ERROR and an `error` object instead of success."""
    if payment.status == "ERROR":
        data["status"] = "ERROR"
        data["error"] = {"code": payment.error_code, "message": payment.error_message}
    elif payment.status == "PENDING":
        data["status"] = "PENDING"
    else:
        data["status"] = ok_status
    return data


def _render_v2(event: EventFacts) -> dict[str, Any]:
    """The Central-Bank-style envelope of 6.2: TRANSFER, RECEIVE or REFUND."""
    payment = event.payment
    counterpart = _counterpart(payment.counterpart)
    if event.type == EventType.CASH_OUT:
        data = _with_error(
            {
                "id": payment.id,
                "txId": _txid(event, payment),
                "pixKey": payment.pix_key,
                "status": None,
                "payment": _payment(payment.amount),
                "endToEndId": payment.end_to_end_id,
                "creditDebitType": "DEBIT",
                "idempotencyKey": payment.idempotency_key,
                "creditorAccount": {
                    "name": counterpart["name"],
                    "document": counterpart["document"],
                    "ispb": counterpart["bank"]["bankISPB"],
                },
                "remittanceInformation": payment.description,
            },
            payment,
            "LIQUIDATED",
        )
        return {"type": "TRANSFER", "data": data}
    if event.type == EventType.CASH_IN:
        data = _with_error(
            {
                "id": payment.id,
                "txId": _txid(event, payment),
                "status": None,
                "payment": _payment(payment.amount),
                "endToEndId": payment.end_to_end_id,
                "debtorAccount": {"name": counterpart["name"], "document": counterpart["document"]},
            },
            payment,
            "LIQUIDATED",
        )
        return {"type": "RECEIVE", "data": data}
    if event.type in (EventType.REFUND_IN, EventType.REFUND_OUT):
        original = event.original or payment
        refund_ok = payment.status == "CONFIRMED"
        data = _with_error(
            {
                "id": original.id,
                "txId": _txid(event, original),
                "status": None,
                "payment": _payment(original.amount),
                "refunds": [
                    {
                        "status": "LIQUIDATED" if refund_ok else payment.status,
                        "payment": {"amount": to_decimal(payment.amount), "currency": "BRL"},
                        "endToEndId": payment.end_to_end_id,
                        "eventDate": _iso(payment.processed_at) or _iso(event.created_at),
                        "information": payment.description,
                    }
                ],
                "endToEndId": original.end_to_end_id,
                "creditDebitType": "DEBIT" if event.type == EventType.REFUND_IN else "CREDIT",
            },
            payment,
            "REFUNDED",
        )
        return {"type": "REFUND", "data": data}
    raise ValueError(f"version v2 has no payload for {event.type}")
