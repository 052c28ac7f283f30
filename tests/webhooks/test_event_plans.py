"""`record_events()` plans its query once per session, whatever its arrays hold.

Left to choose, PostgreSQL planned the query anew on every call: a custom plan for one known
element always looks cheaper than the generic plan, and planning took longer than running
(docs/performance.md, "Events recorded together")."""

from __future__ import annotations

from pixgate.runtime import Runtime
from tests.helpers import function_settings


async def test_record_events_keeps_one_plan_per_session(rt: Runtime) -> None:
    assert await function_settings(rt, "record_events") == ["plan_cache_mode=force_generic_plan"]
