"""`settle_payouts_together()` plans its statements once per session, whatever its arrays hold.

Left to choose, PostgreSQL planned its update of the payouts anew on every call once the
table had statistics: a custom plan for the call's known arrays always looks cheaper than
the generic plan, and planning took as long as running it for a few settlements
(docs/performance.md, "Settlements planned once per session")."""

from __future__ import annotations

from pixgate.runtime import Runtime
from tests.helpers import function_settings


async def test_settle_payouts_together_keeps_one_plan_per_session(rt: Runtime) -> None:
    settings = await function_settings(rt, "settle_payouts_together")
    assert settings == ["plan_cache_mode=force_generic_plan"]
