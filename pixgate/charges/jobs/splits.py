"""Deferred split payouts: one run per account at its next hourly or daily boundary."""

from __future__ import annotations

from datetime import datetime

from pixgate.charges.service import splits
from pixgate.jobs.public import RunDueSplits
from pixgate.runtime import Runtime


async def run_due(rt: Runtime, args: RunDueSplits) -> None:
    await splits.run_due(rt, args.account_id, datetime.fromisoformat(args.due_by))
