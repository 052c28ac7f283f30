"""`record_events()` plans its query once per session, whatever its arrays hold.

Left to choose, PostgreSQL planned the query anew on every call: a custom plan for one known
element always looks cheaper than the generic plan, and planning took longer than running
(docs/performance.md, "Events recorded together")."""

from __future__ import annotations

from pixgate.runtime import Runtime


async def test_record_events_keeps_one_plan_per_session(rt: Runtime) -> None:
    async with rt.db.connection() as conn:
        settings = await conn.fetchval(
            "SELECT proconfig FROM pg_proc WHERE proname = 'record_events'"
            " AND pronamespace = 'public'::regnamespace"
        )
    assert settings == ["plan_cache_mode=force_generic_plan"]
