"""Transactions read by their keys are looked up by the primary key, however young the table.

PostgreSQL keeps the plan `transactions_by_ids()` makes for the session, and a plan made
while the table was nearly empty (a new deployment's first minute) that scanned the table
would then read every payment on every call, more with each new one."""

from __future__ import annotations

from datetime import UTC, datetime

from pixgate.core.labels import OperationType
from pixgate.ledger.public import TRANSACTIONS_BY_IDS, Transaction
from pixgate.runtime import Runtime
from tests.builders import insert_transactions
from tests.helpers import make_account, plan_on_an_empty_table


async def test_the_plan_made_on_an_empty_table_looks_each_key_up(database_url: str) -> None:
    # the function's own statement
    plan = await plan_on_an_empty_table(database_url, "p_ids", TRANSACTIONS_BY_IDS, [1, 2])
    assert "Seq Scan on transactions" not in plan, plan
    assert "Index Scan using transactions_pkey on transactions" in plan, plan


async def test_rows_come_whole_one_per_key_found(rt: Runtime) -> None:
    account = await make_account(rt, balance="50.00")
    now = datetime.now(UTC)
    ids = [
        (
            await insert_transactions(
                rt,
                account.account_id,
                1,
                newest=now,
                amount=cents,
                operation="PAYMENT",
                prefix=f"read-{cents}",
            )
        )[0]
        for cents in (100, 250)
    ]
    async with rt.db.connection() as conn:
        rows = await conn.fetch(TRANSACTIONS_BY_IDS, [ids[1], -1, ids[0], ids[1]])
    found = [Transaction.from_record(row) for row in rows]
    assert [(t.id, t.amount) for t in found] == [(ids[1], 250), (ids[0], 100), (ids[1], 250)]
    assert {(t.account_id, t.operation) for t in found} == {
        (account.account_id, OperationType.PAYMENT)
    }
