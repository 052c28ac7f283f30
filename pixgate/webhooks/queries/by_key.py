"""The Central Bank's webhooks by key (`PUT /webhook/{chave}`): `webhook_endpoints` rows of
version `api_pix`, one per key, with no event type. `record_event()` (`sql/030_events.sql`)
fans a PIX received by the key out to its row; these are the configuration's reads and
writes, each scoped by `account_id`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from pixgate.core.db.pool import Connection
from pixgate.webhooks.queries.endpoints import delete_endpoint
from pixgate.webhooks.rules.webhooks import WebhookVersion


@dataclass(frozen=True, slots=True)
class KeyWebhook:
    """A webhook by key: the URL told of every PIX the key receives."""

    id: int
    account_id: int
    pix_key: str
    url: str
    created_at: datetime

    @classmethod
    def from_record(cls, r: asyncpg.Record) -> KeyWebhook:
        return cls(r["id"], r["account_id"], r["pix_key"], r["url"], r["created_at"])


async def put(conn: Connection, account_id: int, pix_key: str, url: str) -> KeyWebhook:
    """The key's webhook is `url` from now on (`created_at` now): a new row, or the key's row
    replaced, also when the key belonged to another account before."""
    row = await conn.fetchrow(
        """
        INSERT INTO webhook_endpoints (account_id, pix_key, url, version)
        VALUES ($1, $2, $3, $4)
        ON CONFLICT (pix_key) DO UPDATE
        SET account_id = EXCLUDED.account_id, url = EXCLUDED.url, is_active = true,
            created_at = now(), updated_at = now()
        RETURNING id, account_id, pix_key, url, created_at
        """,
        account_id,
        pix_key,
        url,
        WebhookVersion.API_PIX,
    )
    assert row is not None
    return KeyWebhook.from_record(row)


async def get(conn: Connection, account_id: int, pix_key: str) -> KeyWebhook | None:
    row = await conn.fetchrow(
        "SELECT id, account_id, pix_key, url, created_at FROM webhook_endpoints "
        "WHERE pix_key = $1 AND account_id = $2 AND is_active",
        pix_key,
        account_id,
    )
    return None if row is None else KeyWebhook.from_record(row)


async def remove(conn: Connection, account_id: int, pix_key: str) -> bool:
    """Delete the account's webhook of the key; its pending deliveries are failed, past ones
    keep their history. False when the account has none for the key."""
    endpoint_id: int | None = await conn.fetchval(
        "SELECT id FROM webhook_endpoints WHERE pix_key = $1 AND account_id = $2 FOR UPDATE",
        pix_key,
        account_id,
    )
    if endpoint_id is None:
        return False
    return await delete_endpoint(conn, endpoint_id)


_PAGE_FILTER = """
    FROM webhook_endpoints
    WHERE account_id = $1 AND pix_key IS NOT NULL AND is_active
      AND ($2::timestamptz IS NULL OR created_at >= $2)
      AND ($3::timestamptz IS NULL OR created_at <= $3)
"""


async def page(
    conn: Connection,
    account_id: int,
    *,
    start: datetime | None,
    end: datetime | None,
    limit: int,
    offset: int,
) -> tuple[list[KeyWebhook], int]:
    """A page of the account's webhooks by key registered in [start, end], oldest first, and
    how many there are in all."""
    total: int = await conn.fetchval(f"SELECT count(*) {_PAGE_FILTER}", account_id, start, end)
    rows = await conn.fetch(
        f"SELECT id, account_id, pix_key, url, created_at {_PAGE_FILTER} "
        "ORDER BY created_at, id LIMIT $4 OFFSET $5",
        account_id,
        start,
        end,
        limit,
        offset,
    )
    return [KeyWebhook.from_record(r) for r in rows], total
