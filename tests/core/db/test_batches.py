"""Statements for a busy row go together: one statement for everyone who waited, each caller
its own answer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from pixgate.core.db.batches import Batcher, Statement, read_by_key
from pixgate.core.db.pool import Connection
from pixgate.core.errors import DatabaseUnavailable
from pixgate.runtime import Runtime
from tests.helpers import make_account, statements_waiting

KEY = ("account", -1)


class Recorder:
    """A send that answers each item with 10 x item, after checking it really has the row."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.failing: set[int] = set()
        self.broken = False

    async def __call__(self, conn: Connection, items: Sequence[int]) -> list[int | Exception]:
        assert await conn.fetchval("SELECT 1") == 1
        self.batches.append(list(items))
        if self.broken:
            self.broken = False
            raise ConnectionError("the connection broke")
        return [ValueError(f"refused {i}") if i in self.failing else i * 10 for i in items]


async def submit_while_busy(
    rt: Runtime, batcher: Batcher[int, int], items: list[int]
) -> list[int | BaseException]:
    """Submit `items` while the row is taken, then let the row go."""
    async with rt.db.queued(KEY):
        calls = [asyncio.create_task(batcher.submit(KEY, i)) for i in items]
        await statements_waiting(batcher, KEY, len(items))
    return await asyncio.gather(*calls, return_exceptions=True)


async def test_a_lone_request_goes_at_once_alone(rt: Runtime) -> None:
    send = Recorder()
    batcher = Batcher(rt.db, Statement(send))
    assert await batcher.submit(KEY, 7) == 70
    assert send.batches == [[7]]
    await asyncio.gather(*batcher._leaders)  # the leader gives the row back, then stops
    assert batcher._waiting == {}


async def test_those_who_waited_for_the_row_go_in_one_statement(rt: Runtime) -> None:
    send = Recorder()
    batcher = Batcher(rt.db, Statement(send))
    assert await submit_while_busy(rt, batcher, [1, 2, 3, 4, 5]) == [10, 20, 30, 40, 50]
    assert send.batches == [[1, 2, 3, 4, 5]]


async def test_each_caller_gets_its_own_refusal(rt: Runtime) -> None:
    send = Recorder()
    send.failing = {2, 4}
    batcher = Batcher(rt.db, Statement(send))
    results = await submit_while_busy(rt, batcher, [1, 2, 3, 4])
    assert results[0] == 10 and results[2] == 30
    assert [str(r) for r in (results[1], results[3])] == ["refused 2", "refused 4"]
    assert send.batches == [[1, 2, 3, 4]]


async def test_a_broken_statement_fails_its_batch_only(rt: Runtime) -> None:
    send = Recorder()
    send.broken = True
    batcher = Batcher(rt.db, Statement(send))
    results = await submit_while_busy(rt, batcher, [1, 2])
    # the connection broke: every caller of that batch hears the database is out of reach
    assert all(isinstance(r, DatabaseUnavailable) for r in results)
    assert all(isinstance(r.__cause__, ConnectionError) for r in results)
    assert await batcher.submit(KEY, 3) == 30
    assert send.batches == [[1, 2], [3]]


async def test_no_more_than_max_items_per_statement(rt: Runtime) -> None:
    send = Recorder()
    batcher = Batcher(rt.db, Statement(send, max_items=2))
    assert await submit_while_busy(rt, batcher, [1, 2, 3, 4, 5]) == [10, 20, 30, 40, 50]
    assert send.batches == [[1, 2], [3, 4], [5]]


async def test_rows_are_batched_apart(rt: Runtime) -> None:
    send = Recorder()
    batcher = Batcher(rt.db, Statement(send))
    other = ("account", -2)
    async with rt.db.queued(KEY):
        mine = asyncio.create_task(batcher.submit(KEY, 1))
        assert await batcher.submit(other, 2) == 20  # not held up by KEY's busy row
        assert not mine.done()
    assert await mine == 10
    assert send.batches == [[2], [1]]


async def test_cancelled_callers_of_a_stopped_leader_are_cancelled(rt: Runtime) -> None:
    send = Recorder()
    batcher = Batcher(rt.db, Statement(send))
    async with rt.db.queued(KEY):
        call = asyncio.create_task(batcher.submit(KEY, 1))
        await statements_waiting(batcher, KEY, 1)
        for leader in list(batcher._leaders):
            leader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    assert batcher._waiting == {}
    assert send.batches == []


async def test_reads_by_key_waiting_together_go_in_one_query(rt: Runtime) -> None:
    first, second = await make_account(rt, name="First"), await make_account(rt, name="Second")
    by_id = read_by_key("SELECT id, name FROM accounts WHERE id = ANY($1::bigint[])", "id", dict)
    batcher = rt.db.batcher(by_id)
    asked = [second.account_id, -5, first.account_id, second.account_id]
    async with rt.db.queued("accounts"):
        reads = [asyncio.create_task(batcher.submit("accounts", i)) for i in asked]
        await statements_waiting(batcher, "accounts", len(asked))
        assert not any(read.done() for read in reads)
    rows = await asyncio.gather(*reads)
    assert [row and row["name"] for row in rows] == ["Second", None, "First", "Second"]


async def test_the_row_passes_to_the_next_statement_before_the_last_ones_callers_resume(
    rt: Runtime,
) -> None:
    """A busy account's holds and settlements take turns on its row. The turn passes on as
    soon as a statement is done, before its callers resume (answering their requests takes
    the event loop a while), so the row is not left idle meanwhile."""
    order: list[str] = []

    def named(name: str) -> Statement[int, int]:
        recorder = Recorder()

        async def send(conn: Connection, items: Sequence[int]) -> list[int | Exception]:
            order.append(f"{name} sent")
            return await recorder(conn, items)

        return Statement(send)

    holds = Batcher(rt.db, named("holds"))
    settlements = Batcher(rt.db, named("settlements"))

    async def caller(batcher: Batcher[int, int], name: str) -> None:
        await batcher.submit(KEY, 1)
        order.append(f"{name} answered")

    async with rt.db.queued(KEY):
        first = asyncio.create_task(caller(holds, "holds"))
        await statements_waiting(holds, KEY, 1)
        second = asyncio.create_task(caller(settlements, "settlements"))
        await statements_waiting(settlements, KEY, 1)
    await asyncio.gather(first, second)
    assert order == ["holds sent", "settlements sent", "holds answered", "settlements answered"]
