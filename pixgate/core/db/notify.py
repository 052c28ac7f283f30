"""Waking job workers after a commit, without NOTIFY inside the writing transaction.

A transaction that NOTIFYs takes one database-wide lock from just before its commit until
the commit is flushed, so every such transaction commits alone and PostgreSQL cannot group
their fsyncs: a NOTIFY in every cash-out would serialise the commits of the whole database
(docs/performance.md, "Waking workers after the commit"). So the writers only ask for a
wake-up (`notify_after_commit`); once their transaction has committed, this process wakes
its own workers at once and sends one coalesced NOTIFY, in a transaction of its own that
writes nothing, for the workers of other processes. A lost NOTIFY only delays a job until
the workers' next poll: the job row is the durable part.

A wake-up says when the work is due: None for now, or the time of the earliest job it
announces (a settlement the sandbox makes wait). A worker already due to wake by then need
not ask the database for anything (a cash-out would otherwise cost a claim that finds
nothing); other processes read the time from the NOTIFY's payload (`due_from_payload`). A
NOTIFY for work due later than one already announced, and not yet past, is not sent at
all: the workers that heard the earlier one claim at its time, and that claim tells them
when the next job is due, every job committed by then included.

structlog is imported where a failure is logged: importing it imports rich's traceback
renderer, which every command of the CLI (all of them open a pool) would load for nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pixgate.core.db.pool import Connection, Pool

Due = datetime | None
"""When the work a wake-up announces is due: None for now."""

Wakeup = Callable[[Due], None]

_requested: dict[int, dict[str, Due]] = {}


def earliest(a: Due, b: Due) -> Due:
    return None if a is None or b is None else min(a, b)


def notify_after_commit(conn: Connection, channel: str, due: Due = None) -> None:
    """Wake `channel`'s listeners once the transaction on `conn` has committed, for work
    due at `due` (None: now). A naive `due` is refused here, inside the transaction: after
    the commit, comparing it with the workers' aware times would fail a committed request."""
    if due is not None and due.tzinfo is None:
        raise ValueError("a wake-up's due time must be timezone-aware")
    requests = _requested.setdefault(id(conn), {})
    requests[channel] = earliest(requests[channel], due) if channel in requests else due


def take_requests(conn: Connection) -> dict[str, Due]:
    return _requested.pop(id(conn), {})


def due_from_payload(payload: str) -> Due:
    """The due time a NOTIFY of `Notifier` carries: empty for now."""
    return datetime.fromisoformat(payload) if payload else None


class Notifier:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._local: dict[str, list[Wakeup]] = {}
        self._pending: dict[str, Due] = {}
        self._announced: dict[str, datetime] = {}
        """Per channel, the earliest due time a NOTIFY announced (it may be past)."""
        self._sender: asyncio.Task[None] | None = None

    def listen_locally(self, channel: str, callback: Wakeup) -> None:
        self._local.setdefault(channel, []).append(callback)

    def unlisten_locally(self, channel: str, callback: Wakeup) -> None:
        self._local.get(channel, []).remove(callback)

    def notify(self, requests: Mapping[str, Due]) -> None:
        for channel, due in requests.items():
            for callback in self._local.get(channel, ()):
                callback(due)
            if self._covered(channel, due):
                continue
            pending = self._pending
            pending[channel] = earliest(pending[channel], due) if channel in pending else due
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send())

    def _covered(self, channel: str, due: Due) -> bool:
        """Whether other processes' workers will claim before `due` anyway."""
        announced = self._announced.get(channel)
        return due is not None and announced is not None and datetime.now(UTC) < announced <= due

    def _announce(self, channel: str, due: datetime) -> None:
        announced = self._announced.get(channel)
        if announced is None or due < announced or announced <= datetime.now(UTC):
            self._announced[channel] = due

    async def _send(self) -> None:
        while self._pending:
            requests, self._pending = self._pending, {}
            try:
                for channel, due in requests.items():
                    if due is not None and self._covered(channel, due):
                        continue
                    payload = "" if due is None else due.isoformat()
                    await self._pool.execute("SELECT pg_notify($1, $2)", channel, payload)
                    if due is not None:
                        self._announce(channel, due)
            except Exception as exc:
                import structlog

                structlog.get_logger().warning("notify.failed", error=str(exc))

    async def close(self) -> None:
        if self._sender is not None:
            await asyncio.gather(self._sender, return_exceptions=True)
