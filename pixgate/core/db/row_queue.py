"""In-process queues in front of hot rows, so PostgreSQL sees one waiter per process.

When many transactions wait on one row lock (every cash-out of a busy account updates its
balance row), each commit wakes all of them in PostgreSQL: they all retake the lock
manager's partition lock and all but one go back to sleep. That costs the database a core
at a few hundred waiters per second. A statement about to lock such a row (the cash-out's
`payout_create()`, the settlement's `settle_payout()`) first takes the queue of the row's
lane (`Database.lane`: the accounts spread over a few lanes) here, and keeps it until it has
committed or failed, so waiting happens in asyncio, where it is free, and the database's
lock has at most one waiter per lane and process (`Database.queued`).

Correctness never depends on it: the row lock and the guarded UPDATE still decide. A
statement takes at most one queue, before its pool connection and any row lock, and no code
waits for a queue while it holds a pool connection or a row lock, so a queue holder waits
only for the pool and for PostgreSQL, both of which free up.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field


@dataclass
class _Row:
    """Whose turn it is: the holder is implicit (`busy`); waiters get the turn handed over."""

    busy: bool = False
    urgent: deque[asyncio.Future[None]] = field(default_factory=deque)
    normal: deque[asyncio.Future[None]] = field(default_factory=deque)


class RowQueues:
    """One queue per hot row: first come, first served, but urgent work first.

    Urgent work finishes what was already accepted (a settlement posting its hold); new work
    (a cash-out) waits behind it. Served first come first served, a steady flow of new
    cash-outs would hold settlements back and let the backlog of unsettled payouts grow
    without bound (docs/performance.md, "Row queues for hot accounts").
    """

    def __init__(self) -> None:
        self._rows: dict[Hashable, _Row] = {}

    async def enter(self, key: Hashable, *, urgent: bool = False) -> None:
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = _Row()
        if not row.busy:
            row.busy = True
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = row.urgent if urgent else row.normal
        waiting.append(turn)
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():
                self.leave(key)  # the turn came with the cancellation: hand it on
            else:
                waiting.remove(turn)
            raise

    def leave(self, key: Hashable) -> None:
        row = self._rows[key]
        for waiting in (row.urgent, row.normal):
            while waiting:
                turn = waiting.popleft()
                if not turn.done():
                    turn.set_result(None)
                    return
        del self._rows[key]
