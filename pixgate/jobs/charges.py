"""Charge expiry: an unpaid charge is closed at its expiration, whether or not anyone reads it."""

from __future__ import annotations

from pixgate.db.jobs import EXPIRE_CHARGE
from pixgate.jobs.registry import job
from pixgate.runtime import Runtime
from pixgate.services import expiry


@job(EXPIRE_CHARGE)
async def expire(rt: Runtime, *, charge_id: int) -> None:
    await expiry.expire(rt, charge_id)
