"""An event's facts: what a webhook tells about the payment it reports, typed and frozen.

`record_event()` (`webhooks/sql/030_events.sql`) stores them in `events.data` as a versioned
document whose keys are named here, not after `transactions`' columns, so a column can be
renamed without changing what any event, old or new, sends:

    {"version": 1,
     "payment": {...},    the transaction the event reports (null when it names none)
     "original": {...},   the payment a refund returns (null for other events)
     "extra": {...}}      what the producer passed: "metadata", "med", "txId"

A payment's keys: id, transactionId, operation, status, amountCents, feeCents, externalId,
endToEndId, idempotencyKey, pixKey, description, txid, providerTransactionId, errorCode,
errorMessage, processedAt, and counterpart {name, document, ispb, bankName, bankCode,
branch, accountNumber}.

Events recorded before facts existed hold row snapshots (`{"transaction": <row>, "parent":
<row>, "extra": ...}`, no "version"); `read` turns them into the same facts, here and
nowhere else, so every payload is rendered from an `EventFacts` whatever its age.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

FACTS_VERSION = 1


@dataclass(frozen=True, slots=True)
class CounterpartFacts:
    """The other side of the payment as it was known when the event happened."""

    name: str | None = None
    document: str | None = None
    ispb: str | None = None
    bank_name: str | None = None
    bank_code: str | None = None
    branch: str | None = None
    account_number: str | None = None


@dataclass(frozen=True, slots=True)
class PaymentFacts:
    """A payment at the moment of its event; every field empty when the event names none."""

    id: int | None = None
    transaction_id: str | None = None
    operation: str | None = None
    status: str | None = None
    amount: int = 0
    """Cents."""
    fee: int = 0
    """Cents."""
    external_id: str | None = None
    end_to_end_id: str | None = None
    idempotency_key: str | None = None
    pix_key: str | None = None
    description: str | None = None
    txid: str | None = None
    provider_transaction_id: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    counterpart: CounterpartFacts = field(default_factory=CounterpartFacts)
    processed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class EventFacts:
    """An event: its numeric id, type and time, and the facts its payloads are rendered from."""

    id: int
    type: str
    created_at: datetime
    payment: PaymentFacts = field(default_factory=PaymentFacts)
    original: PaymentFacts | None = None
    """The refunded payment, for a refund event."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """The producer's metadata, added to the v1 payload's `metadata`."""
    tx_id: str | None = None
    """The producer's txId, which takes precedence over the payment's own txid."""
    med: Mapping[str, Any] | None = None
    """The MED case (its wire object) of a MED event."""

    @property
    def public_id(self) -> str:
        return f"evt_{self.id}"


def read(
    event_id: int, event_type: str, created_at: datetime, data: Mapping[str, Any]
) -> EventFacts:
    """The facts of a stored event, from `events.data` of either age."""
    stored = data if "version" in data else _from_snapshot(data)
    if stored["version"] != FACTS_VERSION:
        raise ValueError(f"event {event_id} has facts of unknown version {stored['version']}")
    extra: Mapping[str, Any] = stored.get("extra") or {}
    original = stored.get("original")
    return EventFacts(
        id=event_id,
        type=event_type,
        created_at=created_at,
        payment=_payment(stored.get("payment") or {}),
        original=_payment(original) if original else None,
        metadata=extra.get("metadata") or {},
        tx_id=_text(extra.get("txId")),
        med=extra.get("med"),
    )


def _text(value: Any) -> str | None:
    """A txid as text; an empty one is none."""
    return str(value) if value else None


def _payment(fact: Mapping[str, Any]) -> PaymentFacts:
    counterpart: Mapping[str, Any] = fact.get("counterpart") or {}
    processed_at = fact.get("processedAt")
    return PaymentFacts(
        id=fact.get("id"),
        transaction_id=fact.get("transactionId"),
        operation=fact.get("operation"),
        status=fact.get("status"),
        amount=int(fact.get("amountCents") or 0),
        fee=int(fact.get("feeCents") or 0),
        external_id=fact.get("externalId"),
        end_to_end_id=fact.get("endToEndId"),
        idempotency_key=fact.get("idempotencyKey"),
        pix_key=fact.get("pixKey"),
        description=fact.get("description"),
        txid=_text(fact.get("txid")),
        provider_transaction_id=fact.get("providerTransactionId") or None,
        error_code=fact.get("errorCode"),
        error_message=fact.get("errorMessage"),
        counterpart=CounterpartFacts(
            name=counterpart.get("name"),
            document=counterpart.get("document"),
            ispb=counterpart.get("ispb"),
            bank_name=counterpart.get("bankName"),
            bank_code=counterpart.get("bankCode"),
            branch=counterpart.get("branch"),
            account_number=counterpart.get("accountNumber"),
        ),
        processed_at=datetime.fromisoformat(processed_at) if processed_at else None,
    )


# --- events recorded before facts: row snapshots ------------------------------------------


def _from_snapshot(data: Mapping[str, Any]) -> dict[str, Any]:
    """Version-1 facts from a snapshot, read with the column names the rows had when
    snapshots were written (they never change: no snapshot is written any more)."""
    return {
        "version": FACTS_VERSION,
        "payment": _snapshot_payment(data.get("transaction")),
        "original": _snapshot_payment(data.get("parent")),
        "extra": data.get("extra") or {},
    }


def _snapshot_payment(row: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not row:
        return None
    details: Mapping[str, Any] = row.get("details") or {}
    counterpart: Mapping[str, Any] = row.get("counterpart") or {}
    bank: Mapping[str, Any] = counterpart.get("bank") or {}
    return {
        "id": row.get("id"),
        "transactionId": row.get("transaction_id"),
        "operation": row.get("operation"),
        "status": row.get("status"),
        "amountCents": row.get("amount"),
        "feeCents": row.get("fee"),
        "externalId": row.get("external_id"),
        "endToEndId": row.get("end_to_end_id"),
        "idempotencyKey": row.get("idempotency_key"),
        "pixKey": row.get("pix_key"),
        "description": row.get("description"),
        "txid": details.get("txid"),
        "providerTransactionId": details.get("providerTransactionId"),
        "errorCode": row.get("error_code"),
        "errorMessage": row.get("error_message"),
        "counterpart": {
            "name": counterpart.get("name"),
            "document": counterpart.get("document"),
            "ispb": bank.get("bankISPB"),
            "bankName": bank.get("bankName"),
            "bankCode": bank.get("bankCode"),
            "branch": bank.get("accountBranch"),
            "accountNumber": bank.get("accountNumber"),
        },
        "processedAt": row.get("processed_at"),
    }
