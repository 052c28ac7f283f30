"""The notifier after commits: a NOTIFY that fails is logged, and this process's own
listeners are woken all the same; a due time without a time zone is refused before the
commit."""

from __future__ import annotations

from datetime import datetime
from unittest.mock import ANY

import pytest
from structlog.testing import capture_logs

from pixgate.core.db.notify import notify_after_commit
from pixgate.core.db.pool import Database


async def test_a_failed_notify_is_logged_and_local_listeners_are_still_woken(
    database_url: str,
) -> None:
    db = await Database.connect(database_url, min_size=1, max_size=1)
    woken: list[str] = []
    db.notifier.listen_locally("jobs", lambda due: woken.append("jobs"))
    await db.pool.close()  # every NOTIFY fails from now on
    with capture_logs() as logs:
        db.notifier.notify({"jobs": None})
        await db.notifier.close()
    assert woken == ["jobs"]
    assert logs == [{"event": "notify.failed", "error": ANY, "log_level": "warning"}]


async def test_a_naive_due_time_is_refused_before_the_commit(database_url: str) -> None:
    """Compared with the workers' aware times after the commit, it would fail a request
    whose transaction had committed: it is refused while the transaction can still roll
    back."""
    db = await Database.connect(database_url, min_size=1, max_size=1)
    try:
        with pytest.raises(ValueError, match="timezone-aware"):
            async with db.begin() as conn:
                await conn.execute("CREATE TEMP TABLE witness (x int)")
                notify_after_commit(conn, "jobs", datetime(2030, 1, 1))
        async with db.connection() as conn:
            assert await conn.fetchval("SELECT to_regclass('pg_temp.witness')") is None
    finally:
        await db.close()
