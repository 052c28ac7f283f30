"""Settlement jobs: one per outgoing payment, enqueued with the PENDING row."""

from __future__ import annotations

from pixgate.jobs.queue import SettlePayout
from pixgate.runtime import Runtime
from pixgate.services import payouts


async def settle(rt: Runtime, args: SettlePayout) -> None:
    await payouts.settle(rt, args.transaction_id)
