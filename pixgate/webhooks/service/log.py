"""The delivery log: a page of an account's events, each with its deliveries (one per URL)
and every attempt of each (time, URL, status code, duration, error, next retry); and one
delivery in detail: the payload it sends and what the receiver answered to each attempt.

It is apart from the event list because it reads two more tables; the page itself
(filters, order, delivery state) is the event list's, so both agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from pixgate.core.errors import NotFound
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import log as webhook_log
from pixgate.webhooks.queries import outbox as outbox_rows
from pixgate.webhooks.rules.webhooks import AttemptTrigger, DeliveryStatus, WebhookVersion
from pixgate.webhooks.service.delivery import render
from pixgate.webhooks.service.events import EVENT_ID_PREFIX, EventSummary, list_events


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
    transaction_id: UUID | None = None,
) -> DeliveryLog:
    """The event list's page (GET /api/events's filters and order), each event with its
    deliveries and their attempts; `transaction_id`: that transaction's events only."""
    found = await list_events(
        rt,
        account_id,
        event_type=event_type,
        delivery_state=delivery_state,
        page=page,
        size=size,
        transaction_id=transaction_id,
    )
    async with rt.db.connection() as conn:
        deliveries = await webhook_log.deliveries_of(conn, account_id, [e.id for e in found.items])
        attempts = await webhook_log.attempts_of(conn, account_id, [d.id for d in deliveries])
    by_event: dict[int, list[DeliveryEntry]] = {}
    for d in deliveries:
        by_event.setdefault(d.event_id, []).append(_entry(d, attempts))
    events = [EventEntry(e, tuple(by_event.get(e.id, ()))) for e in found.items]
    return DeliveryLog(events, found.total)


def _entry(
    delivery: webhook_log.LoggedDelivery, attempts: list[webhook_log.LoggedAttempt]
) -> DeliveryEntry:
    """A delivery with its own attempts, taken from `attempts` (oldest first)."""
    return DeliveryEntry(
        delivery.id,
        delivery.url,
        delivery.version,
        delivery.temporary,
        delivery.status,
        delivery.next_attempt_at if delivery.status is DeliveryStatus.PENDING else None,
        tuple(
            AttemptEntry(a.id, a.sent_at, a.url, a.trigger, a.status_code, a.duration_ms, a.error)
            for a in attempts
            if a.delivery_id == delivery.id
        ),
    )


@dataclass(frozen=True, slots=True)
class DeliveryDetail:
    """One delivery as its page shows it: its event, the body it POSTs (the bytes signed),
    and its attempts with the start of each answer's body."""

    event_id: int
    event_type: str
    event_created_at: datetime
    transaction_id: str | None
    delivery: DeliveryEntry
    payload: str
    answers: dict[int, str | None]
    """The receiver's body by attempt id (its first `EXCERPT_CHARS` characters)."""

    @property
    def public_event_id(self) -> str:
        return f"{EVENT_ID_PREFIX}{self.event_id}"


async def delivery_detail(rt: Runtime, account_id: int, delivery_id: int) -> DeliveryDetail:
    """One of the account's deliveries; another account's is NotFound. The payload is
    rendered as the next attempt would send it (an event's facts are frozen, so every
    attempt of a v1 or v2 delivery sends the same bytes)."""
    async with rt.db.connection() as conn:
        found = await webhook_log.delivery_of(conn, account_id, delivery_id)
        loaded = await outbox_rows.load_delivery(conn, delivery_id)
        if found is None or loaded is None:
            raise NotFound(f"delivery {delivery_id} not found")
        attempts = await webhook_log.attempts_of(conn, account_id, [delivery_id])
        answers = await webhook_log.answers_of(conn, account_id, delivery_id)
        payload = await render(conn, loaded)
        transaction_id = await webhook_log.transaction_of_event(conn, found.event_id)
    return DeliveryDetail(
        found.event_id,
        loaded.event_type,
        loaded.event_created_at,
        None if transaction_id is None else str(transaction_id),
        _entry(found, attempts),
        payload.decode(),
        answers,
    )
