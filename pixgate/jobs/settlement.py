"""Settlement jobs: one per outgoing payment, enqueued with the PENDING row."""

from __future__ import annotations

from pixgate.db.jobs import SETTLE_PAYOUT
from pixgate.jobs.registry import job
from pixgate.runtime import Runtime
from pixgate.services import payouts


@job(SETTLE_PAYOUT)
async def settle(rt: Runtime, *, transaction_id: int) -> None:
    await payouts.settle(rt, transaction_id)
