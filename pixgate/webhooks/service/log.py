"""The delivery log: a page of an account's events, each with its deliveries (one per URL)
and every attempt of each (time, URL, status code, duration, error, next retry).

It is apart from the event list because it reads two more tables; the page itself
(filters, order, delivery state) is the event list's, so both agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pixgate.runtime import Runtime
from pixgate.webhooks.queries import log as webhook_log
from pixgate.webhooks.rules.webhooks import AttemptTrigger, DeliveryStatus, WebhookVersion
from pixgate.webhooks.service.events import EventSummary, list_events


@dataclass(frozen=True, slots=True)
class AttemptEntry:
    id: int
    sent_at: datetime
    url: str
    trigger: AttemptTrigger
    status_code: int | None
    duration_ms: int
    error: str | None


@dataclass(frozen=True, slots=True)
class DeliveryEntry:
    id: int
    url: str
    version: WebhookVersion
    temporary: bool
    """A resend to a URL given with it, not a configured one."""
    status: DeliveryStatus
    next_attempt_at: datetime | None
    attempts: tuple[AttemptEntry, ...]


@dataclass(frozen=True, slots=True)
class EventEntry:
    event: EventSummary
    deliveries: tuple[DeliveryEntry, ...]


@dataclass(frozen=True, slots=True)
class DeliveryLog:
    events: list[EventEntry]
    total: int


async def delivery_log(
    rt: Runtime,
    account_id: int,
    *,
    event_type: str | None = None,
    delivery_state: str | None = None,
    page: int = 1,
    size: int = 20,
) -> DeliveryLog:
    """The event list's page (GET /api/events's filters and order), each event with its
    deliveries and their attempts."""
    found = await list_events(
        rt,
        account_id,
        event_type=event_type,
        delivery_state=delivery_state,
        page=page,
        size=size,
    )
    async with rt.db.connection() as conn:
        deliveries = await webhook_log.deliveries_of(conn, account_id, [e.id for e in found.items])
        attempts = await webhook_log.attempts_of(conn, account_id, [d.id for d in deliveries])
    by_delivery: dict[int, list[AttemptEntry]] = {}
    for a in attempts:
        by_delivery.setdefault(a.delivery_id, []).append(
            AttemptEntry(
                a.id,
                a.sent_at,
                a.url,
                a.trigger,
                a.status_code,
                a.duration_ms,
                a.error,
            )
        )
    by_event: dict[int, list[DeliveryEntry]] = {}
    for d in deliveries:
        by_event.setdefault(d.event_id, []).append(
            DeliveryEntry(
                d.id,
                d.url,
                d.version,
                d.temporary,
                d.status,
                d.next_attempt_at if d.status is DeliveryStatus.PENDING else None,
                tuple(by_delivery.get(d.id, ())),
            )
        )
    events = [EventEntry(e, tuple(by_event.get(e.id, ()))) for e in found.items]
    return DeliveryLog(events, found.total)
