"""Charges that nobody paid in time: cobs become REMOVIDA_PELO_PSP, cash-in charges EXPIRED.

Each charge enqueues `charges.expire` at its expiration; the job closes it then, whether
or not anyone reads it, and its PENDING payment ends in ERROR (PAYMENT_EXPIRED). Reads
apply the same rule at once, so a charge is never shown open after its time.
"""

from __future__ import annotations

from datetime import datetime

from pixgate.charges.queries import charge_lifecycle
from pixgate.charges.queries import charges as charge_rows
from pixgate.charges.queries.charges import Charge
from pixgate.core.labels import ChargeStatus, TransactionKind
from pixgate.runtime import Runtime

_EXPIRED: dict[str, ChargeStatus] = {
    TransactionKind.COB: ChargeStatus.REMOVIDA_PELO_PSP,
    TransactionKind.CASH_IN: ChargeStatus.EXPIRED,
}


async def expire(rt: Runtime, charge_id: int) -> None:
    async with rt.db.begin() as conn:
        charge = await charge_rows.get(conn, charge_id)
        if charge is None:
            return
        await charge_lifecycle.close(
            conn,
            charge_id,
            status=_EXPIRED[charge.kind],
            error_code="PAYMENT_EXPIRED",
            now=rt.clock.now(),
            only_if_expired=True,
        )


def status_at(charge: Charge, now: datetime) -> ChargeStatus:
    """The status a reader sees: an open charge past its expiration is already closed."""
    if charge.status in charge_rows.OPEN_STATUSES and charge.expires_at <= now:
        return _EXPIRED[charge.kind]
    return charge.status
