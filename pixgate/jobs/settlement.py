"""Settlement jobs: one per outgoing payment, enqueued with the PENDING row."""

from __future__ import annotations

from pixgate.jobs.registry import job
from pixgate.runtime import Runtime
from pixgate.services import payouts


@job("payouts.settle", max_attempts=30)
async def settle(rt: Runtime, *, transaction_id: int) -> None:
    await payouts.settle(rt, transaction_id)
