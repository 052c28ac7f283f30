"""`settle_payouts_together()` plans its statements once per session, whatever its arrays hold,
and that plan reads each payout by its key, however young the table was when it was made.

Left to choose, PostgreSQL planned its update of the payouts anew on every call once the
table had statistics: a custom plan for the call's known arrays always looks cheaper than
the generic plan, and planning took as long as running it for a few settlements
(docs/performance.md, "Settlements planned once per session"). A plan kept for the session
but made while the table was nearly empty scanned it for the PENDING rows, on every call."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from pixgate.jobs.public import DELIVER_WEBHOOK
from pixgate.runtime import Runtime
from tests.helpers import function_settings, plan_on_an_empty_table


async def test_settle_payouts_together_keeps_one_plan_per_session(rt: Runtime) -> None:
    settings = await function_settings(rt, "settle_payouts_together")
    assert settings == ["plan_cache_mode=force_generic_plan", "enable_seqscan=off"]


async def test_the_plan_made_on_an_empty_table_finds_each_payout_by_its_key(
    database_url: str,
) -> None:
    plan = await plan_on_an_empty_table(
        database_url,
        "Update on transactions t",  # the function's update of the payouts
        "SELECT * FROM settle_payouts_together($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        [1, 2],
        ["CONFIRMED", "ERROR"],
        ["E1", None],
        [None, None],
        [None, None],
        [None, None],
        [None, "ORDER_REJECTED"],
        [None, "rejected"],
        [datetime.now(UTC)] * 2,
        ["cash_out", "cash_out"],
        DELIVER_WEBHOOK.name,
        DELIVER_WEBHOOK.max_attempts,
    )
    assert "Seq Scan on transactions" not in plan, plan
    assert re.findall(r"Index Scan using (\S+) on transactions", plan) == ["transactions_pkey"]
    assert "Tid Scan on transactions t" in plan, plan
