"""Pool connections go to callers in the order they asked: one that waits is not overtaken
by callers that ask after it."""

from __future__ import annotations

import asyncio

from pixgate.core.db.pool import Database


async def test_every_caller_of_a_busy_pool_is_served_within_one_round(database_url: str) -> None:
    """Sixteen callers of a two-connection pool, each asking again as soon as it is served: a
    caller waits for at most the fifteen others, never for a second round of theirs."""
    db = await Database.connect(database_url, min_size=2, max_size=2)
    served: list[int] = []
    overtaken: list[int] = []

    async def caller(n: int) -> None:
        for _ in range(20):
            asked = len(served)
            async with db.connection() as conn:
                overtaken.append(len(served) - asked)
                served.append(n)
                await conn.fetchval("SELECT 1")

    try:
        await asyncio.gather(*(caller(n) for n in range(16)))
    finally:
        await db.pool.close()
    assert len(served) == 16 * 20
    assert max(overtaken) <= 15
