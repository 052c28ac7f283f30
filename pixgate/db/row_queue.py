"""In-process queues in front of hot rows, so PostgreSQL sees one waiter per process.

When many transactions wait on one row lock (every cash-out of a busy account updates its
balance row), each commit wakes all of them in PostgreSQL: they all retake the lock
manager's partition lock and all but one go back to sleep. That costs the database a core
at a few hundred waiters per second. A statement about to lock such a row (the cash-out's
`hold_payout()`, the settlement's `settle_payout()`) first takes the row's queue here, and
keeps it until it has committed or failed, so waiting happens in asyncio, where it is free,
and the database's lock has one waiter per process (`Database.queued`).

Correctness never depends on it: the row lock and the guarded UPDATE still decide. A
statement takes at most one queue, after its pool connection and before any row lock, and
a queue holder waits for nothing but PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable


class RowQueues:
    def __init__(self) -> None:
        self._locks: dict[Hashable, asyncio.Lock] = {}
        self._users: dict[Hashable, int] = {}

    async def enter(self, key: Hashable) -> None:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        self._users[key] = self._users.get(key, 0) + 1
        try:
            await lock.acquire()
        except BaseException:
            self._forget(key)
            raise

    def leave(self, key: Hashable) -> None:
        self._locks[key].release()
        self._forget(key)

    def _forget(self, key: Hashable) -> None:
        self._users[key] -= 1
        if self._users[key] == 0:
            del self._users[key], self._locks[key]
