"""Webhook rows: the event outbox fan-out, deliveries and attempts, and the lookups of resend
and the event list (endpoints and signing secrets: `webhooks.queries.endpoints`).

Every query that an API caller reaches is scoped by `account_id`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from pixgate.core.db.pool import Connection
from pixgate.jobs.public import DELIVER_WEBHOOK, wake_workers
from pixgate.webhooks.rules.webhooks import (
    AttemptTrigger,
    DeliveryStatus,
    EventType,
    WebhookVersion,
)

_EVENT_TYPE = {t.value: t for t in EventType}
_VERSION = {v.value: v for v in WebhookVersion}
_DELIVERY_STATUS = {s.value: s for s in DeliveryStatus}


@dataclass(frozen=True, slots=True)
class Delivery:
    """Everything one POST needs (`load_delivery`): the delivery, its event and the
    endpoint's current headers."""

    id: int
    account_id: int
    endpoint_id: int | None
    temporary: bool
    url: str
    version: WebhookVersion
    message_id: str
    status: DeliveryStatus
    attempts: int
    created_at: datetime
    event_id: int
    event_type: EventType
    event_created_at: datetime
    data: dict[str, Any]
    headers: dict[str, str]


@dataclass(frozen=True, slots=True)
class ResendTarget:
    """A delivery a resend posts; `inserted`: made by this resend (no automatic retries)."""

    id: int
    inserted: bool


@dataclass(frozen=True, slots=True)
class EventRow:
    """An event as the event list shows it, with its deliveries' aggregate state."""

    id: int
    type: EventType
    created_at: datetime
    transaction_id: UUID | None
    delivery_state: str
    """A `DeliveryStatus` of the event's deliveries, or `none` when it has none."""


# --- the outbox ---------------------------------------------------------------------------


async def record_event(
    conn: Connection,
    *,
    account_id: int,
    event_type: EventType,
    transaction_id: int | None,
    extra: dict[str, Any],
) -> int:
    """One statement (the `record_event()` function, `sql/030_events.sql`): the event (the
    facts of the transaction and of its parent in `data`), one delivery per active endpoint
    of that type, one `webhook.deliver` job per delivery; the workers are woken when the
    caller's transaction commits, if there is a delivery."""
    row = await conn.fetchrow(
        "SELECT id, jobs FROM record_event($1, $2, $3, $4, $5, $6)",
        account_id,
        event_type,
        transaction_id,
        extra,
        DELIVER_WEBHOOK.name,
        DELIVER_WEBHOOK.max_attempts,
    )
    assert row is not None
    if row["jobs"]:
        wake_workers(conn)
    event_id: int = row["id"]
    return event_id


# --- deliveries and attempts --------------------------------------------------------------


async def load_delivery(conn: Connection, delivery_id: int) -> Delivery | None:
    """Everything one POST needs: the delivery, its event, the endpoint's current headers
    (so fixed credentials apply to retries) and the account's live signing secrets."""
    row = await conn.fetchrow(
        """
        SELECT d.id, d.account_id, d.endpoint_id, d.temporary, d.url, d.version,
               d.message_id, d.status, d.attempts, d.created_at,
               e.id AS event_id, e.type AS event_type, e.created_at AS event_created_at, e.data,
               coalesce(we.headers, '{}'::jsonb) AS headers
        FROM webhook_deliveries d
        JOIN events e ON e.id = d.event_id
        LEFT JOIN webhook_endpoints we ON we.id = d.endpoint_id
        WHERE d.id = $1
        """,
        delivery_id,
    )
    if row is None:
        return None
    return Delivery(
        row["id"],
        row["account_id"],
        row["endpoint_id"],
        row["temporary"],
        row["url"],
        _VERSION[row["version"]],
        row["message_id"],
        _DELIVERY_STATUS[row["status"]],
        row["attempts"],
        row["created_at"],
        row["event_id"],
        _EVENT_TYPE[row["event_type"]],
        row["event_created_at"],
        row["data"],
        row["headers"],
    )


async def log_attempt(
    conn: Connection,
    *,
    delivery_id: int,
    url: str,
    trigger: AttemptTrigger,
    status_code: int | None,
    duration_ms: int,
    response_excerpt: str | None,
    error: str | None,
    sent_at: datetime,
    new_status: DeliveryStatus | None,
    next_attempt_at: datetime | None = None,
) -> int:
    """Log one POST and move its delivery: `new_status` None keeps the status; a delivered
    delivery stays delivered; a failed one can still become delivered (a resend)."""
    attempt_id: int = await conn.fetchval(
        """
        WITH moved AS (
            UPDATE webhook_deliveries SET
                attempts = attempts + 1,
                last_status_code = $4,
                status = CASE WHEN $9::text IS NULL OR status = 'delivered' THEN status
                              ELSE $9 END,
                next_attempt_at = CASE WHEN $9 = 'pending' THEN $10
                                       WHEN $9 IS NULL THEN next_attempt_at END,
                finished_at = CASE WHEN $9 IN ('delivered', 'failed') AND status <> 'delivered'
                                   THEN now() ELSE finished_at END
            WHERE id = $1
        )
        INSERT INTO webhook_attempts (delivery_id, url, trigger, status_code, duration_ms,
                                      response_excerpt, error, sent_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        RETURNING id
        """,
        delivery_id,
        url,
        trigger,
        status_code,
        duration_ms,
        response_excerpt,
        error,
        sent_at,
        new_status,
        next_attempt_at,
    )
    return attempt_id


async def resend_deliveries(conn: Connection, event_id: int) -> list[ResendTarget]:
    """The deliveries of an event to every active endpoint of its type (and to the webhook of
    the key that received its PIX), created for endpoints added after the event; `inserted`
    tells them apart (they get no automatic retries)."""
    rows = await conn.fetch(
        """
        INSERT INTO webhook_deliveries (event_id, account_id, endpoint_id, url, version,
                                        message_id)
        SELECT e.id, e.account_id, we.id, webhook_delivery_url(we.url, we.version),
               we.version, webhook_message_id(e.event_id, we.id::text)
        FROM events e JOIN webhook_endpoints we
          ON we.account_id = e.account_id AND we.is_active
         AND (we.event_type = e.type
              OR we.pix_key = event_pix_key(e.type, e.data)
                 AND EXISTS (SELECT 1 FROM account_keys k
                             WHERE k.key = we.pix_key AND k.account_id = we.account_id))
        WHERE e.id = $1
        ORDER BY we.id
        ON CONFLICT (event_id, endpoint_id) DO UPDATE SET url = EXCLUDED.url
        RETURNING id, (xmax = 0) AS inserted
        """,
        event_id,
    )
    return [ResendTarget(r["id"], r["inserted"]) for r in rows]


async def temporary_delivery(
    conn: Connection, event_id: int, url: str, version: WebhookVersion
) -> int:
    """A resend to a URL given in the request: logged, never retried, never persisted as config."""
    delivery_id: int = await conn.fetchval(
        """
        INSERT INTO webhook_deliveries (event_id, account_id, url, version, message_id, temporary)
        SELECT e.id, e.account_id, $2, $3,
               webhook_message_id(e.event_id, left(md5($2), 12)), true
        FROM events e WHERE e.id = $1
        RETURNING id
        """,
        event_id,
        url,
        version,
    )
    return delivery_id


# --- lookups for resend and the event list ------------------------------------------------


async def find_transaction(
    conn: Connection, account_id: int, *, numeric_id: int | None, uuid: str | None, text: str
) -> int | None:
    """The account's transaction named by numeric id, UUID, end-to-end id or externalId
    (in that order of precedence, when one string could be several)."""
    found: int | None = await conn.fetchval(
        """
        SELECT id FROM transactions
        WHERE account_id = $1
          AND (id = $2 OR transaction_id = $3::uuid OR end_to_end_id = $4 OR external_id = $4)
        ORDER BY CASE WHEN id = $2 THEN 0 WHEN transaction_id = $3::uuid THEN 1
                      WHEN end_to_end_id = $4 THEN 2 ELSE 3 END
        LIMIT 1
        """,
        account_id,
        numeric_id,
        uuid,
        text,
    )
    return found


async def latest_event_of(conn: Connection, account_id: int, transaction_id: int) -> int | None:
    found: int | None = await conn.fetchval(
        "SELECT id FROM events WHERE account_id = $1 AND transaction_id = $2 "
        "ORDER BY id DESC LIMIT 1",
        account_id,
        transaction_id,
    )
    return found


async def event_of_account(conn: Connection, account_id: int, event_id: int) -> int | None:
    found: int | None = await conn.fetchval(
        "SELECT id FROM events WHERE account_id = $1 AND id = $2", account_id, event_id
    )
    return found


async def delivery_of_account(conn: Connection, account_id: int, delivery_id: int) -> int | None:
    found: int | None = await conn.fetchval(
        "SELECT id FROM webhook_deliveries WHERE account_id = $1 AND id = $2",
        account_id,
        delivery_id,
    )
    return found


async def event_endpoint_version(conn: Connection, event_id: int) -> WebhookVersion:
    """The version a temporary URL gets: that of the first endpoint of the type, else v1."""
    version: str | None = await conn.fetchval(
        "SELECT we.version FROM events e JOIN webhook_endpoints we "
        "ON we.account_id = e.account_id AND we.event_type = e.type AND we.is_active "
        "WHERE e.id = $1 ORDER BY we.id LIMIT 1",
        event_id,
    )
    return _VERSION[version] if version else WebhookVersion.V1


_EVENTS_FILTER = """
    FROM events e
    LEFT JOIN transactions t ON t.id = e.transaction_id
    CROSS JOIN LATERAL (
        SELECT CASE WHEN count(*) = 0 THEN 'none'
                    WHEN bool_or(d.status = 'failed') THEN 'failed'
                    WHEN bool_or(d.status = 'pending') THEN 'pending'
                    ELSE 'delivered' END AS delivery_state
        FROM webhook_deliveries d WHERE d.event_id = e.id AND NOT d.temporary
    ) s
    WHERE e.account_id = $1
      AND ($2::text IS NULL OR e.type = $2)
      AND ($3::text IS NULL OR s.delivery_state = $3)
      AND ($4::timestamptz IS NULL OR e.created_at >= $4)
      AND ($5::timestamptz IS NULL OR e.created_at <= $5)
      AND ($6::uuid IS NULL OR t.transaction_id = $6)
"""


async def list_events(
    conn: Connection,
    account_id: int,
    *,
    event_type: str | None,
    delivery_state: str | None,
    start: datetime | None,
    end: datetime | None,
    limit: int,
    offset: int,
    transaction_id: UUID | None = None,
) -> tuple[list[EventRow], int]:
    """A page of the account's events, newest first, with the aggregate delivery state;
    `transaction_id`: only that transaction's."""
    args = (account_id, event_type, delivery_state, start, end, transaction_id)
    total: int = await conn.fetchval(f"SELECT count(*) {_EVENTS_FILTER}", *args)
    rows = await conn.fetch(
        f"""
        SELECT e.id, e.type, e.created_at, t.transaction_id, s.delivery_state
        {_EVENTS_FILTER}
        ORDER BY e.created_at DESC, e.id DESC
        LIMIT $7 OFFSET $8
        """,
        *args,
        limit,
        offset,
    )
    return [
        EventRow(
            r["id"],
            _EVENT_TYPE[r["type"]],
            r["created_at"],
            r["transaction_id"],
            r["delivery_state"],
        )
        for r in rows
    ], total
