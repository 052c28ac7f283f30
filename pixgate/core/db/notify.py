"""Waking job workers after a commit, without NOTIFY inside the writing transaction.

A transaction that NOTIFYs takes one database-wide lock from just before its commit until
the commit is flushed, so every such transaction commits alone and PostgreSQL cannot group
their fsyncs: a NOTIFY in every cash-out would serialise the commits of the whole database
(docs/performance.md, "Waking workers after the commit"). So the writers only ask for a
wake-up (`notify_after_commit`); once their transaction has committed, this process wakes
its own workers at once and sends one coalesced NOTIFY, in a transaction of its own that
writes nothing, for the workers of other processes. A lost NOTIFY only delays a job until
the workers' next poll: the job row is the durable part.

structlog is imported where a failure is logged: importing it imports rich's traceback
renderer, which every command of the CLI (all of them open a pool) would load for nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pixgate.core.db.pool import Connection, Pool

_requested: dict[int, set[str]] = {}


def notify_after_commit(conn: Connection, channel: str) -> None:
    """Wake `channel`'s listeners once the transaction on `conn` has committed."""
    _requested.setdefault(id(conn), set()).add(channel)


def take_requests(conn: Connection) -> set[str]:
    return _requested.pop(id(conn), set())


class Notifier:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._local: dict[str, list[Callable[[], None]]] = {}
        self._pending: set[str] = set()
        self._sender: asyncio.Task[None] | None = None

    def listen_locally(self, channel: str, callback: Callable[[], None]) -> None:
        self._local.setdefault(channel, []).append(callback)

    def unlisten_locally(self, channel: str, callback: Callable[[], None]) -> None:
        self._local.get(channel, []).remove(callback)

    def notify(self, channels: set[str]) -> None:
        for channel in channels:
            for callback in self._local.get(channel, ()):
                callback()
        self._pending |= channels
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        while self._pending:
            channels, self._pending = self._pending, set()
            try:
                for channel in channels:
                    await self._pool.execute("SELECT pg_notify($1, '')", channel)
            except Exception as exc:
                import structlog

                structlog.get_logger().warning("notify.failed", error=str(exc))

    async def close(self) -> None:
        if self._sender is not None:
            await asyncio.gather(self._sender, return_exceptions=True)
