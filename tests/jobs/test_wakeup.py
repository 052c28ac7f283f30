"""Workers are woken after the commit that enqueued a job, never by a rolled-back one."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from pixgate.db import jobs
from pixgate.runtime import Runtime

NOTHING = jobs.JobKind("test.nothing")


class Listener:
    """Another process's worker, as far as PostgreSQL can tell: its own connection."""

    def __init__(self) -> None:
        self.heard = asyncio.Event()

    def __call__(self, *_: object) -> None:
        self.heard.set()


async def listening(database_url: str) -> tuple[asyncpg.Connection, Listener]:
    conn = await asyncpg.connect(database_url)
    listener = Listener()
    await conn.add_listener(jobs.CHANNEL, listener)
    return conn, listener


async def test_another_process_hears_only_after_the_commit(rt: Runtime, database_url: str) -> None:
    other, heard = await listening(database_url)
    try:
        async with rt.db.begin() as conn:
            await jobs.enqueue(conn, NOTHING)
            await asyncio.sleep(0.2)
            assert not heard.heard.is_set()
        await asyncio.wait_for(heard.heard.wait(), timeout=5)
    finally:
        await other.close()


async def test_this_process_is_woken_at_the_commit(rt: Runtime) -> None:
    woken: list[str] = []

    def wake() -> None:
        woken.append("woken")

    rt.db.notifier.listen_locally(jobs.CHANNEL, wake)
    try:
        async with rt.db.begin() as conn:
            await jobs.enqueue(conn, NOTHING)
            assert woken == []
        assert woken == ["woken"]
    finally:
        rt.db.notifier.unlisten_locally(jobs.CHANNEL, wake)


async def test_a_rolled_back_enqueue_wakes_nobody(rt: Runtime, database_url: str) -> None:
    other, heard = await listening(database_url)
    woken: list[str] = []

    def wake() -> None:
        woken.append("woken")

    rt.db.notifier.listen_locally(jobs.CHANNEL, wake)
    try:
        with pytest.raises(RuntimeError):
            async with rt.db.begin() as conn:
                await jobs.enqueue(conn, NOTHING)
                raise RuntimeError("refused")
        await asyncio.sleep(0.3)
        assert not heard.heard.is_set() and woken == []
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
    finally:
        rt.db.notifier.unlisten_locally(jobs.CHANNEL, wake)
        await other.close()
