"""Keys the gateway generates for itself on first start, shared by every process."""

from __future__ import annotations

from collections.abc import Callable

from pixgate.core.db.pool import Connection


async def get_or_create(conn: Connection, name: str, generate: Callable[[], str]) -> str:
    """Return the stored key, creating it once even when several processes start together."""
    stored: str | None = await conn.fetchval("SELECT value FROM server_keys WHERE name = $1", name)
    if stored is not None:
        return stored
    for _ in range(3):
        value: str | None = await conn.fetchval(
            """
        WITH created AS (
            INSERT INTO server_keys (name, value) VALUES ($1, $2)
            ON CONFLICT (name) DO NOTHING RETURNING value
        )
        SELECT value FROM created
        UNION ALL SELECT value FROM server_keys WHERE name = $1
        LIMIT 1
        """,
            name,
            generate(),
        )
        # None only when a concurrent first start committed after our snapshot: read again.
        if value is not None:
            return value
    raise RuntimeError(f"server key {name} could not be created")
