"""Webhook delivery: one automatic attempt of a pending delivery (the `webhook.deliver` job).

It is apart from the HTTP client because it holds the schedule (retry, give up) and the
attempt's log; resend reuses its body, POST and log (`_post_delivery`, `_log`).

The POST to a receiver always happens outside any database transaction: the deliverer
reads what it needs in one short transaction, POSTs, then logs the attempt in another.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta

import orjson
import structlog

from pixgate.core.db.pool import Connection
from pixgate.core.money import json_number
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import outbox as rows
from pixgate.webhooks.rules import event_facts, payloads
from pixgate.webhooks.rules import webhooks as rules
from pixgate.webhooks.rules.webhooks import AttemptTrigger, DeliveryStatus
from pixgate.webhooks.service.config import _signing_secrets
from pixgate.webhooks.service.transport import Attempt, post

log = structlog.get_logger(__name__)


def _body(row: rows.Delivery) -> bytes:
    event = event_facts.read(row.event_id, row.event_type, row.event_created_at, row.data)
    return orjson.dumps(payloads.render(event, row.version), default=json_number)


async def _post_delivery(
    rt: Runtime, row: rows.Delivery, secrets: Sequence[str], *, requested: bool = False
) -> Attempt:
    return await post(
        rt,
        url=row.url,
        body=_body(row),
        message_id=row.message_id,
        headers=row.headers,
        secrets=secrets,
        requested=requested,
    )


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
    attempt = await _post_delivery(rt, row, secrets)
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
