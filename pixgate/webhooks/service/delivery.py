"""Webhook delivery: one automatic attempt of a pending delivery (the `webhook.deliver` job).

It is apart from the HTTP client because it holds the schedule (retry, give up) and the
attempt's log; resend reuses its body, POST and log (`render`, `_post_delivery`, `_log`).

A delivery's body is rendered from its event's frozen facts in the URL's version (v1, v2),
except a webhook by key's (`api_pix`): `{"pix": [Pix]}`, the received PIX exactly as
`GET /pix/{e2eid}` answers it when the attempt is made (the refunds feature's `pix_body`),
its `devolucoes` included.

The POST to a receiver always happens outside any database transaction: the deliverer
reads what it needs in one short transaction, POSTs, then logs the attempt in another.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import orjson
import structlog

from pixgate.core.db.pool import Connection
from pixgate.core.money import json_number
from pixgate.refunds.public import pix_body, received_pix
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import outbox as rows
from pixgate.webhooks.rules import event_facts, payloads
from pixgate.webhooks.rules import webhooks as rules
from pixgate.webhooks.rules.event_facts import EventFacts
from pixgate.webhooks.rules.webhooks import (
    AttemptTrigger,
    DeliveryStatus,
    EventType,
    WebhookVersion,
)
from pixgate.webhooks.service import metrics
from pixgate.webhooks.service.config import _signing_secrets
from pixgate.webhooks.service.transport import Attempt, post

log = structlog.get_logger(__name__)


async def render(conn: Connection, row: rows.Delivery) -> bytes:
    """The body POSTed for a delivery."""
    event = event_facts.read(row.event_id, row.event_type, row.event_created_at, row.data)
    if row.version is WebhookVersion.API_PIX:
        return orjson.dumps(await _pix_list(conn, row.account_id, event))
    return orjson.dumps(payloads.render(event, row.version), default=json_number)


async def _pix_list(conn: Connection, account_id: int, event: EventFacts) -> dict[str, Any]:
    """The callback's `{"pix": [Pix]}`: the PIX received (a `cash_in`) or the PIX a refund
    returns (a `refund_in`), as it is now."""
    pix = event.original if event.type == EventType.REFUND_IN else event.payment
    received = None
    if pix is not None and pix.end_to_end_id is not None:
        received = await received_pix(conn, account_id, pix.end_to_end_id)
    return {"pix": [pix_body(received)] if received is not None else []}


async def _post_delivery(
    rt: Runtime,
    row: rows.Delivery,
    body: bytes,
    secrets: Sequence[str],
    *,
    requested: bool = False,
) -> Attempt:
    attempt = await post(
        rt,
        url=row.url,
        body=body,
        message_id=row.message_id,
        headers=row.headers,
        secrets=secrets,
        requested=requested,
    )
    metrics.attempted(attempt, AttemptTrigger.RESEND if requested else AttemptTrigger.DELIVERY)
    return attempt


async def deliver(rt: Runtime, delivery_id: int) -> float | None:
    """One automatic attempt of a pending delivery; returns the seconds until the next try,
    or None when it is settled (delivered, failed after the retry window, or not pending).

    Every statement here is its own transaction (reads, an insert that does nothing if
    the secret exists, the attempt's log with the delivery's move): three round trips, not
    seven with BEGIN and COMMIT around them, on the path of every webhook."""
    async with rt.db.connection() as conn:
        row = await rows.load_delivery(conn, delivery_id)
        if row is None or row.status is not DeliveryStatus.PENDING:
            return None
        secrets = await _signing_secrets(conn, row.account_id)
        body = await render(conn, row)
    attempt = await _post_delivery(rt, row, body, secrets)
    now = rt.clock.now()
    delay: float | None = None
    next_at: datetime | None = None
    if attempt.ok:
        status = DeliveryStatus.DELIVERED
    elif rules.gives_up(row.created_at, now):
        status = DeliveryStatus.FAILED
    else:
        status = DeliveryStatus.PENDING
        delay = rules.next_delay(
            row.attempts + 1,
            random.random(),
            status_code=attempt.status_code,
            retry_after=attempt.retry_after,
        )
        next_at = now + timedelta(seconds=delay)
    async with rt.db.connection() as conn:
        await _log(conn, row.id, row.url, attempt, AttemptTrigger.DELIVERY, status, next_at)
    metrics.finished(status, row.created_at, now)
    # every attempt is in webhook_attempts; the log line (a JSON render and a write each)
    # is for the ones that did not arrive, like the access log's (docs/performance.md,
    # "A quiet access log")
    emit = log.debug if attempt.ok else log.info
    emit(
        "webhook.attempted",
        delivery_id=delivery_id,
        status=status,
        status_code=attempt.status_code,
        error=attempt.error,
        retry_in=delay,
    )
    return delay


async def _log(
    conn: Connection,
    delivery_id: int,
    url: str,
    attempt: Attempt,
    trigger: AttemptTrigger,
    status: DeliveryStatus | None,
    next_at: datetime | None = None,
) -> int:
    return await rows.log_attempt(
        conn,
        delivery_id=delivery_id,
        url=url,
        trigger=trigger,
        status_code=attempt.status_code,
        duration_ms=attempt.duration_ms,
        response_excerpt=attempt.excerpt,
        error=attempt.error,
        sent_at=attempt.sent_at,
        new_status=status,
        next_attempt_at=next_at,
    )
