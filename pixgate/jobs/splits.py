"""Deferred split payouts: one run per account at its next hourly or daily boundary."""

from __future__ import annotations

from datetime import datetime

from pixgate.db.jobs import RUN_DUE_SPLITS
from pixgate.jobs.registry import job
from pixgate.runtime import Runtime
from pixgate.services import splits


@job(RUN_DUE_SPLITS)
async def run_due(rt: Runtime, *, account_id: int, due_by: str) -> None:
    await splits.run_due(rt, account_id, datetime.fromisoformat(due_by))
