"""Charge expiry: an unpaid charge is closed at its expiration, whether or not anyone reads it."""

from __future__ import annotations

from pixgate.charges.service import expiry
from pixgate.jobs.public import ExpireCharge
from pixgate.runtime import Runtime


async def expire(rt: Runtime, args: ExpireCharge) -> None:
    await expiry.expire(rt, args.charge_id)
