"""Webhook configuration rows: each account's endpoints (URL, event type, headers, version)
and its signing secrets.

Every query that an API caller reaches is scoped by `account_id`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from pixgate.core.db.pool import Connection
from pixgate.webhooks.rules.webhooks import DeliveryStatus, EventType, WebhookVersion

_EVENT_TYPE = {t.value: t for t in EventType}
_VERSION = {v.value: v for v in WebhookVersion}


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A `webhook_endpoints` row: a URL that receives one event type of one account."""

    id: int
    account_id: int
    event_type: EventType
    url: str
    headers: dict[str, str]
    version: WebhookVersion
    is_active: bool
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_record(cls, r: asyncpg.Record) -> Endpoint:
        return cls(
            r["id"],
            r["account_id"],
            _EVENT_TYPE[r["event_type"]],
            r["url"],
            r["headers"],
            _VERSION[r["version"]],
            r["is_active"],
            r["created_at"],
            r["updated_at"],
        )


# --- endpoints ----------------------------------------------------------------------------


async def lock_account(conn: Connection, account_id: int) -> bool:
    """Serialise configuration changes of one account (the 3-active-URLs rule) without
    touching the accounts row that balance updates lock; False when the account is unknown."""
    found: bool = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1::bigint) "
        "FROM pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1::bigint, 0))",
        account_id,
    )
    return found


async def account_exists(conn: Connection, account_id: int) -> bool:
    found: bool = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1)", account_id
    )
    return found


async def find_endpoint(
    conn: Connection, account_id: int, event_type: EventType, url: str
) -> Endpoint | None:
    row = await conn.fetchrow(
        "SELECT * FROM webhook_endpoints WHERE account_id = $1 AND event_type = $2 AND url = $3",
        account_id,
        event_type,
        url,
    )
    return None if row is None else Endpoint.from_record(row)


async def count_active(conn: Connection, account_id: int, event_type: EventType) -> int:
    count: int = await conn.fetchval(
        "SELECT count(*) FROM webhook_endpoints "
        "WHERE account_id = $1 AND event_type = $2 AND is_active",
        account_id,
        event_type,
    )
    return count


async def insert_endpoint(
    conn: Connection,
    account_id: int,
    event_type: EventType,
    url: str,
    headers: dict[str, str],
    version: WebhookVersion,
) -> Endpoint:
    row = await conn.fetchrow(
        """
        INSERT INTO webhook_endpoints (account_id, event_type, url, headers, version)
        VALUES ($1, $2, $3, $4, $5) RETURNING *
        """,
        account_id,
        event_type,
        url,
        headers,
        version,
    )
    assert row is not None
    return Endpoint.from_record(row)


async def update_endpoint(
    conn: Connection, endpoint_id: int, headers: dict[str, str], version: WebhookVersion
) -> Endpoint:
    """New headers and version; an inactive endpoint registered again is active again."""
    row = await conn.fetchrow(
        "UPDATE webhook_endpoints SET headers = $2, version = $3, is_active = true, "
        "updated_at = now() WHERE id = $1 RETURNING *",
        endpoint_id,
        headers,
        version,
    )
    assert row is not None
    return Endpoint.from_record(row)


async def list_endpoints(conn: Connection, account_id: int) -> list[Endpoint]:
    """The account's URLs per event type (its webhooks by key are `queries.by_key`'s)."""
    rows = await conn.fetch(
        "SELECT * FROM webhook_endpoints WHERE account_id = $1 AND event_type IS NOT NULL "
        "ORDER BY event_type, id",
        account_id,
    )
    return [Endpoint.from_record(r) for r in rows]


@dataclass(frozen=True, slots=True)
class ActiveUrl:
    """Where one active endpoint delivers, of any account and kind (by key ones too)."""

    id: int
    account_id: int
    url: str


async def active_urls(conn: Connection) -> list[ActiveUrl]:
    """Every active URL of every account: what the server checks against its settings at
    start."""
    rows = await conn.fetch(
        "SELECT id, account_id, url FROM webhook_endpoints WHERE is_active ORDER BY id"
    )
    return [ActiveUrl(r["id"], r["account_id"], r["url"]) for r in rows]


async def _fail_pending(conn: Connection, endpoint_id: int) -> None:
    await conn.execute(
        "UPDATE webhook_deliveries SET status = $2, finished_at = now(), "
        "next_attempt_at = NULL WHERE endpoint_id = $1 AND status = $3",
        endpoint_id,
        DeliveryStatus.FAILED,
        DeliveryStatus.PENDING,
    )


async def delete_endpoint(conn: Connection, endpoint_id: int) -> bool:
    """Remove an endpoint; its pending deliveries are failed, past ones keep their history."""
    await _fail_pending(conn, endpoint_id)
    status = await conn.execute("DELETE FROM webhook_endpoints WHERE id = $1", endpoint_id)
    deleted = bool(status == "DELETE 1")
    return deleted


async def deactivate_endpoint(conn: Connection, account_id: int, endpoint_id: int) -> bool:
    """The account's active endpoint stops receiving events (its row and history stay); its
    pending deliveries are failed, as a removal fails them. False: not the account's, or
    already inactive."""
    status = await conn.execute(
        "UPDATE webhook_endpoints SET is_active = false, updated_at = now() "
        "WHERE id = $1 AND account_id = $2 AND is_active",
        endpoint_id,
        account_id,
    )
    if status != "UPDATE 1":
        return False
    await _fail_pending(conn, endpoint_id)
    return True


# --- secrets ------------------------------------------------------------------------------


async def create_secret_if_missing(conn: Connection, account_id: int, secret: str) -> None:
    await conn.execute(
        "INSERT INTO webhook_secrets (account_id, secret) VALUES ($1, $2) "
        "ON CONFLICT (account_id) WHERE expires_at IS NULL DO NOTHING",
        account_id,
        secret,
    )


async def reveal_secret(conn: Connection, account_id: int) -> str | None:
    """The current secret, once: None when it has already been shown."""
    secret: str | None = await conn.fetchval(
        "UPDATE webhook_secrets SET revealed_at = now() "
        "WHERE account_id = $1 AND expires_at IS NULL AND revealed_at IS NULL RETURNING secret",
        account_id,
    )
    return secret


async def rotate_secret(
    conn: Connection, account_id: int, secret: str, overlap_seconds: float
) -> None:
    """The current secret keeps signing for the overlap window; the new one is shown now."""
    await conn.execute(
        "UPDATE webhook_secrets SET expires_at = now() + make_interval(secs => $2) "
        "WHERE account_id = $1 AND expires_at IS NULL",
        account_id,
        overlap_seconds,
    )
    await conn.execute(
        "INSERT INTO webhook_secrets (account_id, secret, revealed_at) VALUES ($1, $2, now())",
        account_id,
        secret,
    )


async def signing_secrets(conn: Connection, account_id: int) -> list[str]:
    """Secrets that sign right now, newest first."""
    rows = await conn.fetch(
        "SELECT secret FROM webhook_secrets WHERE account_id = $1 "
        "AND (expires_at IS NULL OR expires_at > now()) ORDER BY id DESC",
        account_id,
    )
    return [r["secret"] for r in rows]
