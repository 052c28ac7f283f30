"""The delivery log's reads: the deliveries of some events and the attempts of some
deliveries, each scoped by `account_id` (the dashboard names them by id)."""

from __future__ import annotations

import asyncpg

from pixgate.db.pool import Connection


async def deliveries_of(
    conn: Connection, account_id: int, event_ids: list[int]
) -> list[asyncpg.Record]:
    """The account's deliveries of these events (temporary resend URLs included), oldest first."""
    return await conn.fetch(
        """
        SELECT id, event_id, url, version, temporary, status, attempts, next_attempt_at,
               last_status_code, created_at, finished_at
        FROM webhook_deliveries
        WHERE account_id = $1 AND event_id = ANY($2::bigint[])
        ORDER BY event_id, id
        """,
        account_id,
        event_ids,
    )


async def attempts_of(
    conn: Connection, account_id: int, delivery_ids: list[int]
) -> list[asyncpg.Record]:
    """Every POST of these deliveries of the account, oldest first (never the answer's body)."""
    return await conn.fetch(
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
