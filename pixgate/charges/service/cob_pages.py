"""`GET /cob` of the API Pix: the account's cobs created in a window, by debtor, location
and status, a page at a time."""

from __future__ import annotations

from dataclasses import dataclass

from pixgate.charges.queries import cob_pages
from pixgate.charges.queries.cob_pages import CobFilter
from pixgate.charges.rules.pages import PageRequest, Paging, Window
from pixgate.charges.service.cob import Cob, receiving_key
from pixgate.charges.service.expiry import status_at
from pixgate.core.errors import ValidationFailed
from pixgate.runtime import Runtime


@dataclass(frozen=True, slots=True)
class CobQuery:
    window: Window
    cpf: str | None
    cnpj: str | None
    linked: bool | None
    status: str | None
    page: PageRequest

    def __post_init__(self) -> None:
        if self.cpf is not None and self.cnpj is not None:
            raise ValidationFailed(["cnpj: cannot be used together with cpf"])


@dataclass(frozen=True, slots=True)
class CobPage:
    cobs: list[Cob]
    paging: Paging


async def page(rt: Runtime, account_id: int, query: CobQuery) -> CobPage:
    """Oldest first; the status filter is the status a reader sees (an ATIVA cob past its
    expiration is REMOVIDA_PELO_PSP)."""
    now = rt.clock.now()
    where = CobFilter(
        account_id=account_id,
        start=query.window.start,
        end=query.window.end,
        cpf=query.cpf,
        cnpj=query.cnpj,
        linked=query.linked,
        status=query.status,
        now=now,
        offset=query.page.offset,
        limit=query.page.size,
    )
    async with rt.db.connection() as conn:
        charges, total = await cob_pages.page(conn, where)
        locations = await cob_pages.locations_of(conn, [c.id for c in charges])
        payments = await cob_pages.payments_of(conn, [c.transaction_id for c in charges])
        cobs = [
            Cob(
                charge,
                status_at(charge, now),
                payments.get(charge.transaction_id),
                locations.get(charge.id),
                key=await receiving_key(conn, charge),
            )
            for charge in charges
        ]
    return CobPage(cobs, Paging.of(query.page, total))
