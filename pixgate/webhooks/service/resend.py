"""Webhook resend: one synchronous attempt of an event, on the merchant's request.

It is apart from delivery because it finds the event by what the merchant knows (`evt_<id>`,
a transaction's ids or externalId), may POST to a temporary URL, and answers with the
first attempt instead of scheduling a retry; each attempt goes through delivery's POST and log.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from pixgate.core.db.pool import Connection
from pixgate.core.errors import NotFound, NoWebhookDestination, ValidationFailed
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import outbox as rows
from pixgate.webhooks.rules import webhooks as rules
from pixgate.webhooks.rules.webhooks import AttemptTrigger, DeliveryStatus
from pixgate.webhooks.service.config import _signing_secrets
from pixgate.webhooks.service.delivery import _log, _post_delivery, render
from pixgate.webhooks.service.events import EVENT_ID_PREFIX
from pixgate.webhooks.service.transport import Attempt, check_url


@dataclass(frozen=True, slots=True)
class ResendOutcome:
    """What one URL answered to a resend: its status code, or why there was none."""

    url: str
    status_code: int | None
    error: str | None
    ok: bool


@dataclass(frozen=True, slots=True)
class ResendResult:
    webhook_log_id: int
    status_code: int | None
    sent_at: datetime
    message: str
    outcomes: tuple[ResendOutcome, ...]
    """Every URL's answer, in the order of `targets` (the API answers the first's)."""


async def _find_event(conn: Connection, account_id: int, identifier: str) -> int:
    """The event a resend re-emits: `evt_<id>`, or the latest event of the transaction named
    by numeric id, UUID transactionId, end-to-end id or externalId."""
    event_number = _bigint(identifier.removeprefix(EVENT_ID_PREFIX))
    if identifier.startswith(EVENT_ID_PREFIX) and event_number is not None:
        event_id = await rows.event_of_account(conn, account_id, event_number)
        if event_id is None:
            raise NotFound(f"event {identifier} not found")
        return event_id
    numeric = _bigint(identifier)
    try:
        uuid: str | None = str(UUID(identifier))
    except ValueError:
        uuid = None
    transaction_id = await rows.find_transaction(
        conn, account_id, numeric_id=numeric, uuid=uuid, text=identifier
    )
    if transaction_id is None:
        raise NotFound(f"transaction {identifier} not found")
    event_id = await rows.latest_event_of(conn, account_id, transaction_id)
    if event_id is None:
        raise ValidationFailed(f"transaction {identifier} has no webhook event yet (still pending)")
    return event_id


def _bigint(text: str) -> int | None:
    """`text` as an id PostgreSQL's bigint holds, or None: then it is looked up as text (an
    externalId). `str.isdigit` alone takes superscripts such as `²`, which `int` refuses."""
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    return None


def _resend_message(attempt: Attempt) -> str:
    if attempt.ok:
        return "Webhook resent successfully"
    if attempt.status_code is not None and not rules.is_success(attempt.status_code):
        return f"Webhook resent; the destination answered {attempt.status_code}"
    return f"Webhook could not be delivered: {attempt.error}"


async def resend(rt: Runtime, account_id: int, identifier: str, url: str | None) -> ResendResult:
    """One synchronous attempt to `url`, or to every active URL of the event's type; the answer
    is the first URL's, and every attempt is logged. A success settles a pending or failed
    delivery (its scheduled retry then finds nothing to do)."""
    if url is not None:
        await check_url(rt, url)
    async with rt.db.begin() as conn:
        event_id = await _find_event(conn, account_id, identifier)
        if url is not None:
            version = await rows.event_endpoint_version(conn, event_id)
            targets = [(await rows.temporary_delivery(conn, event_id, url, version), True)]
        else:
            found = await rows.resend_deliveries(conn, event_id)
            targets = [(r.id, r.inserted) for r in found]
            if not targets:
                raise NoWebhookDestination(
                    "no url given and no active webhook configured for this event type"
                )
        prepared = await _prepare(conn, account_id, targets)
    return await _post_and_log(rt, targets, prepared)


async def resend_delivery(rt: Runtime, account_id: int, delivery_id: int) -> ResendResult:
    """One synchronous attempt of one of the account's deliveries, to its own URL (the
    dashboard's "resend to this URL"); another account's delivery is NotFound. A success
    settles it, a failure leaves its status and retries as they were."""
    async with rt.db.begin() as conn:
        if await rows.delivery_of_account(conn, account_id, delivery_id) is None:
            raise NotFound(f"delivery {delivery_id} not found")
        targets = [(delivery_id, False)]
        prepared = await _prepare(conn, account_id, targets)
    return await _post_and_log(rt, targets, prepared)


@dataclass(frozen=True, slots=True)
class _Prepared:
    secrets: list[str]
    deliveries: list[rows.Delivery]
    bodies: list[bytes]


async def _prepare(conn: Connection, account_id: int, targets: list[tuple[int, bool]]) -> _Prepared:
    """What the POSTs need, read in the resend's transaction: secrets, deliveries, bodies."""
    secrets = await _signing_secrets(conn, account_id)
    loaded = [await rows.load_delivery(conn, delivery_id) for delivery_id, _ in targets]
    deliveries = [row for row in loaded if row is not None]
    bodies = [await render(conn, row) for row in deliveries]
    return _Prepared(secrets, deliveries, bodies)


async def _post_and_log(
    rt: Runtime, targets: list[tuple[int, bool]], prepared: _Prepared
) -> ResendResult:
    """The POSTs at once, outside any transaction, then every attempt logged in one."""
    deliveries = prepared.deliveries
    attempts = await asyncio.gather(
        *(
            _post_delivery(rt, row, body, prepared.secrets, requested=True)
            for row, body in zip(deliveries, prepared.bodies, strict=True)
        )
    )
    log_ids: list[int] = []
    async with rt.db.begin() as conn:
        for (_, fresh), row, attempt in zip(targets, deliveries, attempts, strict=True):
            status: DeliveryStatus | None = (
                DeliveryStatus.DELIVERED
                if attempt.ok
                else (DeliveryStatus.FAILED if fresh else None)
            )
            log_ids.append(
                await _log(conn, row.id, row.url, attempt, AttemptTrigger.RESEND, status)
            )
    first = attempts[0]
    outcomes = tuple(
        ResendOutcome(row.url, attempt.status_code, attempt.error, attempt.ok)
        for row, attempt in zip(deliveries, attempts, strict=True)
    )
    return ResendResult(
        log_ids[0], first.status_code, first.sent_at, _resend_message(first), outcomes
    )
