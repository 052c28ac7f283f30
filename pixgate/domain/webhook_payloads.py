"""What a webhook says: the v1 and v2 payloads, rendered from an event's frozen facts.

Payloads are rendered from an event's `data` (the transaction row as it was when the event
was recorded), so every retry and every resend of one event carries the same facts, and a
v1 URL and a v2 URL receive the same facts in their two shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pixgate.domain.labels import MOVEMENT_TYPES
from pixgate.domain.masking import mask_document
from pixgate.domain.money import format_amount, to_cents, to_decimal
from pixgate.domain.webhooks import V1_EVENT_NAMES, EventType, WebhookVersion


@dataclass(frozen=True, slots=True)
class EventFacts:
    """An events row: the numeric id, its type, when it happened, and the frozen data."""

    id: int
    type: str
    created_at: datetime
    data: dict[str, Any]

    @property
    def public_id(self) -> str:
        return f"evt_{self.id}"


def render(event: EventFacts, version: str) -> dict[str, Any]:
    """The body POSTed to a URL of `version` for this event."""
    if version == WebhookVersion.V2:
        return _render_v2(event)
    return _render_v1(event)


def _iso(value: str | datetime | None) -> str | None:
    """Snapshot timestamps (to_jsonb text with an offset) as ISO 8601 UTC with `Z`."""
    if value is None:
        return None
    at = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _counterpart(row: dict[str, Any]) -> dict[str, Any]:
    counterpart = row.get("counterpart") or {}
    bank = counterpart.get("bank") or {}
    return {
        "name": counterpart.get("name"),
        "document": mask_document(counterpart.get("document")),
        "bank": {
            key: bank.get(key)
            for key in ("bankISPB", "bankName", "bankCode", "accountBranch", "accountNumber")
        },
    }


def _render_v1(event: EventFacts) -> dict[str, Any]:
    """The flat public-family shape: 6.3 for cash-out, the same fields for the others."""
    row: dict[str, Any] = event.data.get("transaction") or {}
    extra: dict[str, Any] = event.data.get("extra") or {}
    amount, fee = int(row.get("amount") or 0), int(row.get("fee") or 0)
    movement = MOVEMENT_TYPES.get(row.get("operation", ""), "DEBIT")
    # a refund's providerTransactionId, answered at creation, correlates its webhook
    provider_id = (row.get("details") or {}).get("providerTransactionId")
    correlation = {"providerTransactionId": provider_id} if provider_id else {}
    final = amount + fee if movement == "DEBIT" else amount - fee
    body: dict[str, Any] = {
        "event": V1_EVENT_NAMES[event.type],
        "status": row.get("status"),
        "transactionType": "PIX",
        "movementType": movement,
        "transactionId": row.get("transaction_id"),
        "externalId": row.get("external_id"),
        "endToEndId": row.get("end_to_end_id"),
        "pixKey": row.get("pix_key"),
        "feeAmount": to_decimal(fee),
        "originalAmount": to_decimal(amount),
        "finalAmount": to_decimal(final),
        "processingDate": _iso(row.get("processed_at")) or _iso(event.created_at),
        "errorCode": row.get("error_code"),
        "errorMessage": row.get("error_message"),
        "counterpart": _counterpart(row),
        "metadata": {
            "eventId": event.public_id,
            "occurredAt": _iso(event.created_at),
            **correlation,
            **(extra.get("metadata") or {}),
        },
    }
    if event.type.startswith("med_"):
        body["med"] = _med(extra["med"])
    return body


def _med(case: dict[str, Any]) -> dict[str, Any]:
    """The MED case stored with its event. Its amounts come back from jsonb as floats (exact
    to the cent in their range), and are written with two decimals again, as on every answer."""
    original = case.get("originalTransaction")
    return case | {
        "blockedAmount": to_decimal(to_cents(case["blockedAmount"])),
        "originalTransaction": original
        and original | {"amount": to_decimal(to_cents(original["amount"]))},
    }


def _payment(cents: int) -> dict[str, str]:
    return {"amount": format_amount(cents), "currency": "BRL"}


def _txid(row: dict[str, Any], extra: dict[str, Any]) -> str | None:
    # `txId` is the v2 field name, which producers pass in the event's `extra`
    # (services.charges); `transactions.details` spells it `txid`, and no code has ever written
    # `details.txId`, so the row is read in that one spelling.
    details = row.get("details") or {}
    txid = extra.get("txId") or details.get("txid")
    return str(txid) if txid else None


def _with_error(data: dict[str, Any], row: dict[str, Any], ok_status: str) -> dict[str, Any]:
    """A failed operation reports status ERROR and an `error` object instead of success."""
    if row.get("status") == "ERROR":
        data["status"] = "ERROR"
        data["error"] = {"code": row.get("error_code"), "message": row.get("error_message")}
    elif row.get("status") == "PENDING":
        data["status"] = "PENDING"
    else:
        data["status"] = ok_status
    return data


def _render_v2(event: EventFacts) -> dict[str, Any]:
    """The Central-Bank-style envelope of 6.2: TRANSFER, RECEIVE or REFUND."""
    row: dict[str, Any] = event.data.get("transaction") or {}
    extra: dict[str, Any] = event.data.get("extra") or {}
    counterpart = _counterpart(row)
    amount = int(row.get("amount") or 0)
    if event.type == EventType.CASH_OUT:
        data = _with_error(
            {
                "id": row.get("id"),
                "txId": _txid(row, extra),
                "pixKey": row.get("pix_key"),
                "status": None,
                "payment": _payment(amount),
                "endToEndId": row.get("end_to_end_id"),
                "creditDebitType": "DEBIT",
                "idempotencyKey": row.get("idempotency_key"),
                "creditorAccount": {
                    "name": counterpart["name"],
                    "document": counterpart["document"],
                    "ispb": counterpart["bank"]["bankISPB"],
                },
                "remittanceInformation": row.get("description"),
            },
            row,
            "LIQUIDATED",
        )
        return {"type": "TRANSFER", "data": data}
    if event.type == EventType.CASH_IN:
        data = _with_error(
            {
                "id": row.get("id"),
                "txId": _txid(row, extra),
                "status": None,
                "payment": _payment(amount),
                "endToEndId": row.get("end_to_end_id"),
                "debtorAccount": {"name": counterpart["name"], "document": counterpart["document"]},
            },
            row,
            "LIQUIDATED",
        )
        return {"type": "RECEIVE", "data": data}
    if event.type in (EventType.REFUND_IN, EventType.REFUND_OUT):
        original: dict[str, Any] = event.data.get("parent") or row
        refund_ok = row.get("status") == "CONFIRMED"
        data = _with_error(
            {
                "id": original.get("id"),
                "txId": _txid(original, extra),
                "status": None,
                "payment": _payment(int(original.get("amount") or 0)),
                "refunds": [
                    {
                        "status": "LIQUIDATED" if refund_ok else row.get("status"),
                        "payment": {"amount": to_decimal(amount), "currency": "BRL"},
                        "endToEndId": row.get("end_to_end_id"),
                        "eventDate": _iso(row.get("processed_at")) or _iso(event.created_at),
                        "information": row.get("description"),
                    }
                ],
                "endToEndId": original.get("end_to_end_id"),
                "creditDebitType": "DEBIT" if event.type == EventType.REFUND_IN else "CREDIT",
            },
            row,
            "REFUNDED",
        )
        return {"type": "REFUND", "data": data}
    raise ValueError(f"version v2 has no payload for {event.type}")
