"""The delivery log's reads: the deliveries of some events and the attempts of some
deliveries, each scoped by `account_id` (the dashboard names them by id)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import asyncpg

from pixgate.core.db.pool import Connection
from pixgate.webhooks.rules.webhooks import AttemptTrigger, DeliveryStatus, WebhookVersion


@dataclass(frozen=True, slots=True)
class LoggedDelivery:
    """A `webhook_deliveries` row as the delivery log shows it."""

    id: int
    event_id: int
    url: str
    version: WebhookVersion
    temporary: bool
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class LoggedAttempt:
    """A `webhook_attempts` row: one POST (never the answer's body)."""

    id: int
    delivery_id: int
    url: str
    trigger: AttemptTrigger
    status_code: int | None
    duration_ms: int
    error: str | None
    sent_at: datetime


_DELIVERY_COLUMNS = (
    "id, event_id, url, version, temporary, status, attempts, next_attempt_at, created_at"
)


def _delivery(r: asyncpg.Record) -> LoggedDelivery:
    return LoggedDelivery(
        r["id"],
        r["event_id"],
        r["url"],
        WebhookVersion(r["version"]),
        r["temporary"],
        DeliveryStatus(r["status"]),
        r["attempts"],
        r["next_attempt_at"],
        r["created_at"],
    )


async def deliveries_of(
    conn: Connection, account_id: int, event_ids: list[int]
) -> list[LoggedDelivery]:
    """The account's deliveries of these events (temporary resend URLs included), oldest first."""
    rows = await conn.fetch(
        f"""
        SELECT {_DELIVERY_COLUMNS}
        FROM webhook_deliveries
        WHERE account_id = $1 AND event_id = ANY($2::bigint[])
        ORDER BY event_id, id
        """,  # noqa: S608 - this module's constant
        account_id,
        event_ids,
    )
    return [_delivery(r) for r in rows]


async def delivery_of(conn: Connection, account_id: int, delivery_id: int) -> LoggedDelivery | None:
    """One of the account's deliveries (another account's is None)."""
    row = await conn.fetchrow(
        f"SELECT {_DELIVERY_COLUMNS} FROM webhook_deliveries "  # noqa: S608 - a constant
        "WHERE account_id = $1 AND id = $2",
        account_id,
        delivery_id,
    )
    return None if row is None else _delivery(row)


async def answers_of(conn: Connection, account_id: int, delivery_id: int) -> dict[int, str | None]:
    """What the receiver answered to each POST of one of the account's deliveries: the start
    of the body (`rules.EXCERPT_CHARS`), by attempt id; None where no answer came."""
    rows = await conn.fetch(
        """
        SELECT a.id, a.response_excerpt
        FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.account_id = $1 AND a.delivery_id = $2
        """,
        account_id,
        delivery_id,
    )
    return {r["id"]: r["response_excerpt"] for r in rows}


async def attempts_of(
    conn: Connection, account_id: int, delivery_ids: list[int]
) -> list[LoggedAttempt]:
    """Every POST of these deliveries of the account, oldest first (never the answer's body)."""
    rows = await conn.fetch(
        """
        SELECT a.id, a.delivery_id, a.url, a.trigger, a.status_code, a.duration_ms, a.error,
               a.sent_at
        FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.account_id = $1 AND a.delivery_id = ANY($2::bigint[])
        ORDER BY a.delivery_id, a.id
        """,
        account_id,
        delivery_ids,
    )
    return [
        LoggedAttempt(
            r["id"],
            r["delivery_id"],
            r["url"],
            AttemptTrigger(r["trigger"]),
            r["status_code"],
            r["duration_ms"],
            r["error"],
            r["sent_at"],
        )
        for r in rows
    ]


async def transaction_of_event(conn: Connection, event_id: int) -> UUID | None:
    """The public transactionId of the transaction an event tells of (None: no transaction)."""
    found: UUID | None = await conn.fetchval(
        "SELECT t.transaction_id FROM events e JOIN transactions t ON t.id = e.transaction_id "
        "WHERE e.id = $1",
        event_id,
    )
    return found
