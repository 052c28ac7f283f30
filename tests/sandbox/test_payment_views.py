"""What the sandbox reads to settle payouts (`sandbox.queries.payment_view`): each payout's
instructions are looked up by its key, however young the table was when the connection
planned the read. `provider_instructions` gains a row with every payout, and a join planned
while it was nearly empty read all of it on every settlement."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from pixgate.runtime import Runtime
from pixgate.sandbox.queries import VIEWS, payment_view
from tests.builders import insert_transactions
from tests.helpers import make_account, plan_on_an_empty_table

EVP = "123e4567-e12b-42d3-a456-426614174000"


async def test_the_plan_made_on_an_empty_table_looks_each_payout_up(database_url: str) -> None:
    plan = await plan_on_an_empty_table(
        database_url,
        "provider_instructions",
        VIEWS,
        [EVP, EVP],
        [1, 2],
        table="provider_instructions",
    )
    assert "Seq Scan on provider_instructions" not in plan, plan
    assert "Index Scan using provider_instructions_pkey on provider_instructions" in plan, plan


async def test_each_payout_gets_its_own_instructions_or_none(rt: Runtime) -> None:
    account = await make_account(rt, balance="50.00")
    ids = await insert_transactions(rt, account.account_id, 3, newest=datetime.now(UTC))
    async with rt.db.connection() as conn:
        await conn.executemany(
            "INSERT INTO provider_instructions (transaction_id, value) VALUES ($1, $2)",
            [(ids[0], "first"), (ids[2], "third")],
        )
    views = await asyncio.gather(*(payment_view(rt.db, EVP, i) for i in ids))
    assert [v.instructions for v in views] == ["first", None, "third"]
