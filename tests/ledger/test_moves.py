"""Every balance move of the ledger, driven in random orders through the database functions
the payment paths call: after each move the balances equal a model and the journal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pixgate.ledger.queries import journal
from pixgate.ledger.service import verify
from pixgate.runtime import Runtime
from tests.helpers import make_account

AMOUNTS = st.integers(min_value=1, max_value=50_000)
MOVES = st.lists(
    st.one_of(
        st.tuples(st.just("fund"), st.integers(0, 1), AMOUNTS),
        st.tuples(st.just("hold"), st.integers(0, 1), AMOUNTS, st.integers(0, 500)),
        st.tuples(st.just("post"), st.integers(0, 30)),
        st.tuples(st.just("void"), st.integers(0, 30)),
        st.tuples(st.just("credit"), st.integers(0, 1), AMOUNTS, st.integers(0, 500)),
    ),
    max_size=25,
)


@dataclass
class Model:
    available: list[int]
    blocked: list[int]
    holds: list[tuple[int, int, int]] = field(default_factory=list)
    """(account index, amount, fee) of each hold not yet posted or voided."""


async def _apply(conn: Any, ids: list[int], model: Model, move: tuple[Any, ...]) -> None:
    kind = move[0]
    if kind == "fund":
        _, who, amount = move
        await journal.fund(conn, ids[who], amount, memo="test")
        model.available[who] += amount
    elif kind == "hold":
        _, who, amount, fee = move
        held = await conn.fetchval(
            "SELECT (ledger_hold($1, $2, NULL)).id IS NOT NULL", ids[who], amount + fee
        )
        assert held == (model.available[who] >= amount + fee)
        if held:
            model.available[who] -= amount + fee
            model.blocked[who] += amount + fee
            model.holds.append((who, amount, fee))
    elif kind in ("post", "void") and model.holds:
        who, amount, fee = model.holds.pop(move[1] % len(model.holds))
        model.blocked[who] -= amount + fee
        if kind == "post":
            await conn.execute("SELECT ledger_post($1, $2, $3, NULL)", ids[who], amount, fee)
        else:
            await conn.execute("SELECT ledger_void($1, $2, NULL)", ids[who], amount + fee)
            model.available[who] += amount + fee
    elif kind == "credit":
        _, who, amount, fee = move
        fee = min(fee, amount)
        await journal.credit(conn, ids[who], amount, fee, transaction_id=None)
        model.available[who] += amount - fee


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(moves=MOVES)
async def test_random_moves_keep_balances_equal_to_the_model_and_the_journal(
    rt: Runtime, moves: list[tuple[Any, ...]]
) -> None:
    accounts = [await make_account(rt, name="A"), await make_account(rt, name="B")]
    ids = [a.account_id for a in accounts]
    model = Model(available=[0, 0], blocked=[0, 0])
    async with rt.db.connection() as conn:
        for move in moves:
            await _apply(conn, ids, model, move)
            rows = await conn.fetch(
                "SELECT available, blocked FROM accounts WHERE id = ANY($1) ORDER BY id", ids
            )
            assert [r["available"] for r in rows] == model.available
            assert [r["blocked"] for r in rows] == model.blocked
            assert await verify.problems(conn) == []


async def test_a_post_or_void_above_blocked_is_refused_and_moves_nothing(rt: Runtime) -> None:
    account = await make_account(rt, balance="10.00")
    async with rt.db.connection() as conn:
        await conn.execute("SELECT ledger_hold($1, 500, NULL)", account.account_id)
        for statement in (
            "SELECT ledger_post($1, 500, 1, NULL)",
            "SELECT ledger_void($1, 501, NULL)",
        ):
            with pytest.raises(asyncpg.RaiseError, match="blocked balance"):
                await conn.execute(statement, account.account_id)
        row = await conn.fetchrow(
            "SELECT available, blocked FROM accounts WHERE id = $1", account.account_id
        )
        assert (row["available"], row["blocked"]) == (500, 500)
        assert await verify.problems(conn) == []
