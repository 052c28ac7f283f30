"""A request the database rolled back to break a deadlock wrote nothing: it answers the 503 of
a race lost (`TRY_AGAIN`, `Retry-After`), which the client sends again, not a 500. The soak
(bench/soak.py) met such a deadlock about once in ten thousand requests under faults."""

from __future__ import annotations

import asyncio

import httpx
from fastapi import FastAPI

from pixgate.core.errors import TryAgain
from pixgate.payouts.queries.payments import _hold_outcome
from pixgate.runtime import Runtime
from tests.helpers import assert_general_error, make_account


async def deadlock(rt: Runtime, first: int, second: int) -> None:
    """Two transactions lock two accounts in opposite orders: the database breaks the cycle by
    rolling one back, whose DeadlockDetectedError this raises."""
    both_locked = asyncio.Barrier(2)

    async def lock(one: int, other: int) -> None:
        async with rt.db.begin() as conn:
            await conn.execute("SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE", one)
            await both_locked.wait()
            await conn.execute("SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE", other)

    await asyncio.gather(lock(first, second), lock(second, first))


async def test_a_deadlock_answers_try_again(
    rt: Runtime, app: FastAPI, client: httpx.AsyncClient
) -> None:
    a, b = await make_account(rt), await make_account(rt)

    async def route() -> None:
        await deadlock(rt, a.account_id, b.account_id)

    app.add_api_route("/api/test-deadlock", route, methods=["POST"])
    response = await client.post("/api/test-deadlock")
    body = assert_general_error(response, 503, "TRY_AGAIN")
    assert response.headers["retry-after"] == "1"
    assert "nothing was written" in body["message"]


def test_a_batched_payout_that_lost_a_deadlock_is_try_again() -> None:
    row = {"err_state": "40P01", "err_message": "deadlock detected", "err_detail": None}
    assert isinstance(_hold_outcome(row), TryAgain)  # type: ignore[arg-type]
