"""Statements for one hot row, a lane of them (or one table) that arrive while one is in
flight go together in the next.

Every cash-out and every settlement of an account locks the account's row until its COMMIT,
so they run one at a time (`row_queue`), each paying a round trip, a function call, a
commit and an fsync. Under load the requests for a busy account wait for the row anyway;
here they wait in a list instead, per lane of accounts (`Database.lane`), and whoever gets
the lane next sends them all in one statement (`payouts_create()` /
`settle_payouts()`, `sql/040_payouts.sql`). Nobody waits for a batch to fill: a lone request
goes alone, as soon as the lane is free.

The statement writes its elements together (one insert of all the rows, one move of the
account's row), and when one of them is refused it goes again one element at a time, each in
a subtransaction of its own, so one refusal does not undo the others; each caller gets its
own result or exception. If the statement itself fails (the connection broke), every caller
of that batch gets the exception, as a lone caller would.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

import asyncpg

if TYPE_CHECKING:
    from pixgate.core.db.pool import Connection, Database

Item = TypeVar("Item")
Result = TypeVar("Result")
Row = TypeVar("Row")
# One result per item, in order: the value for its caller, or the exception it raises.
Send = Callable[["Connection", Sequence[Item]], Awaitable[Sequence["Result | Exception"]]]

# A write that goes one element at a time makes each a subtransaction; PostgreSQL keeps up to
# 64 of a transaction's subtransaction ids in shared memory before every snapshot gets slower.
# A group's failed attempt is rolled back, its id forgotten, before its elements go one by
# one, so a batch of 48 keeps at most 48, with room to spare. Against 32, one account's
# cash-outs settled 2-6 % faster (docs/performance.md, "Batches per lane").
MAX_ITEMS = 48
MAX_READS = 256


@dataclass(frozen=True, slots=True)
class Statement(Generic[Item, Result]):
    """How a batch is sent; `urgent` batches finish accepted work and go first (`row_queue`)."""

    send: Send[Item, Result]
    urgent: bool = False
    max_items: int = MAX_ITEMS


def read_by_key(
    query: str, column: str, convert: Callable[[asyncpg.Record], Row]
) -> Statement[Hashable, Row | None]:
    """Reads of one row by its key, batched: `query` takes the array of keys as $1 and
    returns at most one row per key, whose key is in `column`; each caller gets its row as
    `convert` makes it. The settlement jobs read their payouts and destination keys by the
    hundred: one round trip for all that wait instead of one each (docs/performance.md,
    "Batched reads by key")."""

    async def send(conn: Connection, keys: Sequence[Hashable]) -> list[Row | None]:
        found = {row[column]: row for row in await conn.fetch(query, list(keys))}
        return [None if (row := found.get(key)) is None else convert(row) for key in keys]

    return Statement(send, max_items=MAX_READS)


class StatementFailed(Exception):
    """An element of a batch failed with an error its caller does not expect."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(f"{sqlstate}: {message}")
        self.sqlstate = sqlstate


class Batcher(Generic[Item, Result]):
    """Collects items per key (a hot row, a table) and sends them with `send`, one batch at a
    time per key."""

    def __init__(self, db: Database, statement: Statement[Item, Result]) -> None:
        self._db = db
        self._send = statement.send
        self._urgent = statement.urgent
        self._max_items = statement.max_items
        self._waiting: dict[Hashable, list[tuple[Item, asyncio.Future[Result]]]] = {}
        self._leaders: set[asyncio.Task[None]] = set()

    async def submit(self, key: Hashable, item: Item) -> Result:
        """Send `item` in the next statement for row `key`; its result, or its exception."""
        result: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        waiting = self._waiting.get(key)
        if waiting is None:
            waiting = self._waiting[key] = []
            # a context of its own: the leader serves many requests, it logs as none of them
            leader = asyncio.create_task(self._lead(key, waiting), context=contextvars.Context())
            self._leaders.add(leader)
            leader.add_done_callback(self._leaders.discard)
        waiting.append((item, result))
        return await result

    async def _lead(
        self, key: Hashable, waiting: list[tuple[Item, asyncio.Future[Result]]]
    ) -> None:
        """Until nobody waits for `key`: take the row, then everything waiting, and send it."""
        batch: list[tuple[Item, asyncio.Future[Result]]] = []
        try:
            while waiting:
                batch = []
                results: Sequence[Result | Exception] | None = None
                try:
                    async with self._db.queued(key, urgent=self._urgent) as conn:
                        batch = waiting[: self._max_items]
                        del waiting[: self._max_items]
                        results = await self._send(conn, [item for item, _ in batch])
                except Exception as exc:
                    if results is None:  # else it committed: its answers stand
                        if not batch:  # the row or a connection could not be had
                            batch = waiting[:]
                            waiting.clear()
                        for _, future in batch:
                            _fail(future, exc)
                finally:
                    # Answered once the row is handed on, so the next statement for it is
                    # sent before these callers resume (an event loop runs callbacks in
                    # order): the row is not left idle while they answer their requests.
                    if results is not None:
                        _answer(batch, results)
                batch = []
        finally:
            # empty unless this task was cancelled (shutdown): its callers are cancelled too
            for _, future in [*batch, *waiting]:
                future.cancel()
            del self._waiting[key]


def _answer(
    batch: Sequence[tuple[Item, asyncio.Future[Result]]],
    results: Sequence[Result | Exception],
) -> None:
    for (_, future), outcome in zip(batch, results, strict=True):
        if isinstance(outcome, Exception):
            _fail(future, outcome)
        elif not future.done():
            future.set_result(outcome)


def _fail(future: asyncio.Future[Result], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
