"""Outgoing volume per account and quarter-hour bucket (D6's limits read it)."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from pixgate.db.pool import Connection


async def add(
    conn: Connection, account_id: int, bucket: datetime, amount: int,
    *, day_start: datetime, night_start: datetime | None,
) -> asyncpg.Record:
    """Count `amount` in its bucket and answer the day's and the night's totals, it included.

    One statement. The earlier buckets are read from the statement's snapshot and the current
    one from the upsert's result, which sees every commit before the row lock was granted.
    Callers hold the account row lock first (the hold), so usage rows are always locked after
    account rows and never the other way round.
    """
    row = await conn.fetchrow(
        """
        WITH bumped AS (
            INSERT INTO limit_usage AS u (account_id, bucket, used) VALUES ($1, $2, $3)
            ON CONFLICT (account_id, bucket) DO UPDATE SET used = u.used + EXCLUDED.used
            RETURNING used
        )
        SELECT (SELECT used FROM bumped)
                   + coalesce(sum(used) FILTER (WHERE bucket >= $4), 0) AS today,
               (SELECT used FROM bumped)
                   + coalesce(sum(used) FILTER (WHERE bucket >= $5), 0) AS tonight
        FROM limit_usage
        WHERE account_id = $1 AND bucket >= least($4, $5) AND bucket < $2
        """,
        account_id, bucket, amount, day_start, night_start or day_start,
    )
    assert row is not None
    return row
