"""The notifier after commits: a NOTIFY that fails is logged, and this process's own
listeners are woken all the same."""

from __future__ import annotations

from unittest.mock import ANY

from structlog.testing import capture_logs

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
