"""The event outbox: an event is written in the transaction of the state change it reports.

`data` freezes the facts of the transaction (and, for refunds, of the payment it returns)
as they are at that moment, under names of their own (`webhooks/rules/event_facts.py`), so a later
redelivery carries the same facts; the webhook payloads (v1/v2) are rendered from them.
In the same statement each active webhook URL of that event type gets a delivery row and a
`webhook.deliver` job, so a committed state change can never lose its webhook and a
rolled-back one never sends any.

Producers: `extra={"metadata": {...}}` lands in the v1 payload's `metadata`; MED events
pass `extra={"med": <the 2.11 MED object>}`; `extra={"txId": ...}` fills v2's txId.
"""

from __future__ import annotations

from typing import Any

from pixgate.core.db.pool import Connection
from pixgate.webhooks.queries import outbox as webhook_rows
from pixgate.webhooks.rules.webhooks import EVENT_TYPES, EventType

__all__ = ["EVENT_TYPES", "EventType", "record"]


async def record(
    conn: Connection,
    *,
    account_id: int,
    type: EventType,
    transaction_id: int | None,
    extra: dict[str, Any] | None = None,
) -> int:
    """Write the event and its deliveries in `conn`'s transaction; returns the event id."""
    return await webhook_rows.record_event(
        conn,
        account_id=account_id,
        event_type=EventType(type),  # a ValueError for a string that names no event type
        transaction_id=transaction_id,
        extra=extra or {},
    )
