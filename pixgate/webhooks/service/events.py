"""The webhook event list: an account's events, a page at a time, with their delivery state.

It is apart from delivery and resend because it only reads (one connection, no transaction)
and sends nothing; it also owns the public form of an event id, `evt_<id>`, which resend accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from pixgate.core.db.replica import PRIMARY, Read
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import outbox as rows

EVENT_ID_PREFIX = "evt_"

DELIVERY_STATES = ("delivered", "pending", "failed", "none")


@dataclass(frozen=True, slots=True)
class EventSummary:
    id: int
    type: str
    transaction_id: str | None
    created_at: datetime
    delivery_state: str

    @property
    def public_id(self) -> str:
        return f"{EVENT_ID_PREFIX}{self.id}"


@dataclass(frozen=True, slots=True)
class EventPage:
    items: list[EventSummary]
    total: int
    read: Read = PRIMARY
    """Where the events came from: a standby may be a little behind (`Runtime.reads`)."""


async def list_events(
    rt: Runtime,
    account_id: int,
    *,
    event_type: str | None = None,
    delivery_state: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    page: int = 1,
    size: int = 20,
    transaction_id: UUID | None = None,
) -> EventPage:
    async with rt.reads() as (conn, read):
        found, total = await rows.list_events(
            conn,
            account_id,
            event_type=event_type,
            delivery_state=delivery_state,
            start=start,
            end=end,
            limit=size,
            offset=(page - 1) * size,
            transaction_id=transaction_id,
        )
    items = [
        EventSummary(
            r.id,
            r.type,
            str(r.transaction_id) if r.transaction_id else None,
            r.created_at,
            r.delivery_state,
        )
        for r in found
    ]
    return EventPage(items, total, read)
