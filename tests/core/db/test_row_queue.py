"""The per-process queue in front of a hot row: one statement at a time, kept to its COMMIT."""

from __future__ import annotations

import asyncio

import pytest

from pixgate.core.db.row_queue import RowQueues
from pixgate.runtime import Runtime
from tests.helpers import make_account


async def test_one_at_a_time_in_arrival_order_and_forgotten_when_idle() -> None:
    queues = RowQueues()
    order: list[int] = []

    async def use(n: int) -> None:
        await queues.enter("a")
        order.append(n)
        await asyncio.sleep(0)
        order.append(n)
        queues.leave("a")

    await asyncio.gather(*(use(n) for n in range(5)))
    assert order == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert queues._rows == {}


async def test_urgent_work_goes_first_then_arrival_order() -> None:
    queues = RowQueues()
    order: list[str] = []
    await queues.enter("a")

    async def use(name: str, *, urgent: bool = False) -> None:
        await queues.enter("a", urgent=urgent)
        order.append(name)
        queues.leave("a")

    waiters = [
        asyncio.create_task(use("new 1")),
        asyncio.create_task(use("new 2")),
        asyncio.create_task(use("settle 1", urgent=True)),
        asyncio.create_task(use("settle 2", urgent=True)),
    ]
    await asyncio.sleep(0)
    queues.leave("a")
    await asyncio.gather(*waiters)
    assert order == ["settle 1", "settle 2", "new 1", "new 2"]
    assert queues._rows == {}


async def test_a_turn_handed_to_a_cancelled_waiter_goes_on_to_the_next() -> None:
    queues = RowQueues()
    await queues.enter("a")
    first = asyncio.create_task(queues.enter("a"))
    second = asyncio.create_task(queues.enter("a"))
    await asyncio.sleep(0)
    queues.leave("a")  # the turn goes to `first`...
    first.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, timeout=1)
    queues.leave("a")
    assert queues._rows == {}


async def test_a_cancelled_waiter_leaves_no_trace() -> None:
    queues = RowQueues()
    await queues.enter("a")
    waiter = asyncio.create_task(queues.enter("a"))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    queues.leave("a")
    assert queues._rows == {}


async def test_the_place_is_kept_until_the_statement_has_committed(rt: Runtime) -> None:
    """The second statement enters only once the first one's write is committed."""
    account = await make_account(rt)
    key = ("account", account.account_id)
    first_queued = asyncio.Event()
    seen: list[str] = []

    async def first() -> None:
        async with rt.db.queued(key) as conn:
            first_queued.set()
            await conn.execute(
                "UPDATE accounts SET name = 'renamed' WHERE id = $1", account.account_id
            )
            await asyncio.sleep(0.05)

    async def second() -> None:
        await first_queued.wait()
        async with rt.db.queued(key), rt.db.connection() as other:
            seen.append(
                await other.fetchval("SELECT name FROM accounts WHERE id = $1", account.account_id)
            )

    await asyncio.gather(first(), second())
    assert seen == ["renamed"]


async def test_an_error_gives_the_place_up(rt: Runtime) -> None:
    with pytest.raises(ValueError):
        async with rt.db.queued(("account", 1)):
            raise ValueError("refused")
    async with asyncio.timeout(1), rt.db.queued(("account", 1)):
        pass
