"""The account's charges, newest first: cash-in charges and cobs alike, by their payment's
transactionId (the dashboard's list of charges)."""

from __future__ import annotations

from dataclasses import dataclass

from pixgate.charges.queries import charge_list as rows
from pixgate.charges.queries.charge_list import ListedCharge
from pixgate.runtime import Runtime


@dataclass(frozen=True, slots=True)
class ChargePage:
    charges: list[ListedCharge]
    page: int
    size: int
    total: int
    more: bool
    """A charge exists past this page."""


async def page(rt: Runtime, account_id: int, *, number: int, size: int) -> ChargePage:
    async with rt.db.connection() as conn:
        found = await rows.page(conn, account_id, offset=(number - 1) * size, limit=size + 1)
        total = await rows.count(conn, account_id)
    return ChargePage(found[:size], number, size, total, len(found) > size)
