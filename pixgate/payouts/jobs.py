"""Settlement jobs: one per outgoing payment, enqueued with the PENDING row."""

from __future__ import annotations

from pixgate.jobs.public import SettlePayout
from pixgate.payouts.service import settlement as payouts
from pixgate.runtime import Runtime


async def settle(rt: Runtime, args: SettlePayout) -> None:
    await payouts.settle(rt, args.transaction_id)
