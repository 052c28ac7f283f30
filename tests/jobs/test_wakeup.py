"""Workers are woken after the commit that enqueued a job, never by a rolled-back one.

No test sleeps and then asserts that nothing came: another connection sends a marker on
the same channel, and PostgreSQL delivers a channel's notifications in commit order, so a
wake-up sent before the marker would be heard before it. This process's own workers are
woken synchronously by the commit, so their absence is checked right after it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from pixgate.jobs import queue as jobs
from pixgate.runtime import Runtime


@dataclass(frozen=True)
class Nothing:
    pass


NOTHING = jobs.JobKind("test.nothing", Nothing)
MARKER = "marker"
"""The payload of the test's own notification; the job wake-up's payload is empty."""


class Listener:
    """Another process's worker, as far as PostgreSQL can tell: its own connection. It keeps
    each payload it hears, in order."""

    def __init__(self) -> None:
        self.heard: list[str] = []
        self._new = asyncio.Event()

    def __call__(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        self.heard.append(payload)
        self._new.set()

    async def until_heard(self, payload: str) -> list[str]:
        """What was heard up to and including `payload` (at most 5 s of waiting)."""
        async with asyncio.timeout(5):
            while payload not in self.heard:
                self._new.clear()
                await self._new.wait()
        return self.heard[: self.heard.index(payload) + 1]


async def listening(database_url: str) -> tuple[asyncpg.Connection, Listener]:
    conn = await asyncpg.connect(database_url)
    listener = Listener()
    await conn.add_listener(jobs.CHANNEL, listener)
    return conn, listener


async def send_marker(database_url: str) -> None:
    """A committed notification of a third connection, after everything sent so far."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SELECT pg_notify($1, $2)", jobs.CHANNEL, MARKER)
    finally:
        await conn.close()


async def test_another_process_hears_only_after_the_commit(rt: Runtime, database_url: str) -> None:
    other, listener = await listening(database_url)
    try:
        async with rt.db.begin() as conn:
            await jobs.enqueue(conn, NOTHING, Nothing())
            await send_marker(database_url)
            assert await listener.until_heard(MARKER) == [MARKER]
        assert await listener.until_heard("") == [MARKER, ""]
    finally:
        await other.close()


async def test_this_process_is_woken_at_the_commit(rt: Runtime) -> None:
    woken: list[str] = []

    def wake(due: object) -> None:
        woken.append("woken")

    rt.db.notifier.listen_locally(jobs.CHANNEL, wake)
    try:
        async with rt.db.begin() as conn:
            await jobs.enqueue(conn, NOTHING, Nothing())
            assert woken == []
        assert woken == ["woken"]
    finally:
        rt.db.notifier.unlisten_locally(jobs.CHANNEL, wake)


async def test_a_rolled_back_enqueue_wakes_nobody(rt: Runtime, database_url: str) -> None:
    other, listener = await listening(database_url)
    woken: list[str] = []

    def wake(due: object) -> None:
        woken.append("woken")

    rt.db.notifier.listen_locally(jobs.CHANNEL, wake)
    try:
        with pytest.raises(RuntimeError):
            async with rt.db.begin() as conn:
                await jobs.enqueue(conn, NOTHING, Nothing())
                raise RuntimeError("refused")
        assert woken == [], "this process's workers are woken by the commit itself, or never"
        await send_marker(database_url)
        assert await listener.until_heard(MARKER) == [MARKER]
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
    finally:
        rt.db.notifier.unlisten_locally(jobs.CHANNEL, wake)
        await other.close()


async def test_another_process_hears_a_due_time_only_when_it_is_the_earliest_to_come(
    rt: Runtime, database_url: str
) -> None:
    """A settlement the sandbox makes wait is announced with its due time; later ones add
    nothing until that time has passed (the claim made then finds them), an earlier one or
    one due now is announced."""
    other, listener = await listening(database_url)
    soon = datetime.now(UTC) + timedelta(seconds=30)

    async def enqueue(run_at: datetime | None) -> None:
        async with rt.db.begin() as conn:
            await jobs.enqueue(conn, NOTHING, Nothing(), run_at=run_at)
        await rt.db.notifier.close()  # what it sends is sent

    try:
        await enqueue(soon)
        await enqueue(soon + timedelta(seconds=1))
        await send_marker(database_url)
        assert await listener.until_heard(MARKER) == [soon.isoformat(), MARKER]
        earlier = soon - timedelta(seconds=1)
        await enqueue(earlier)
        await enqueue(None)
        assert await listener.until_heard("") == [
            soon.isoformat(),
            MARKER,
            earlier.isoformat(),
            "",
        ]
    finally:
        await other.close()
