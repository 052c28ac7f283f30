"""Every operation of the gateway's root API, as the request it sends and the server's
answer model it reads. The request bodies are the server's own request models, so a body
the client builds is one the server reads.

Writes that can be sent twice safely carry what the gateway recognises a second time: a
cash-out's or a cash-in's `externalId`, a DICT transfer's idempotency key (made here when
none is given), a cob's txid, a devolucao's id, a refund-in's `externalId` when given.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import date, datetime
from typing import TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from pixgate.accounts.schemas.balances import AccountBalances, StandardBalance
from pixgate.charges.schemas.cash_in import CashInRequest, CashInResponse
from pixgate.charges.schemas.cob import CobPatch, CobRequest, CobResponse
from pixgate.client.calls import Call, Listing, Page, Params, reader, scenario_header
from pixgate.ledger.schemas import ListedTransaction, TransactionPage
from pixgate.med.schemas import MedItem, MedPage
from pixgate.payouts.schemas.cash_out import CashOutRequest, CashOutResponse
from pixgate.payouts.schemas.cash_out_qrcode import QrCashOutRequest, QrCashOutResponse
from pixgate.payouts.schemas.dict_transfer import DictTransferRequest, DictTransferResponse
from pixgate.refunds.schemas import (
    DevolucaoRequest,
    DevolucaoResponse,
    RefundInRequest,
    RefundInResponse,
)
from pixgate.webhooks.schemas import EventItem, EventList

T = TypeVar("T")
A = TypeVar("A", bound=BaseModel)

Instant = date | datetime | str
"""A date or an instant of a filter: ISO 8601 text, or a `date`/`datetime`."""


def _segment(value: str | int) -> str:
    """A path segment, percent-encoded (a PIX key may hold `+` or `@`)."""
    return quote(str(value), safe="")


def _iso(at: Instant | None) -> str | None:
    return at if at is None or isinstance(at, str) else at.isoformat()


# --- balances ------------------------------------------------------------------------------


def balances() -> Call[AccountBalances]:
    """`GET /accounts/balances`: available, blocked and overdraft, in the Central Bank's shape."""
    return Call("GET", "/accounts/balances", reader(AccountBalances), retry_safe=True)


def balance() -> Call[StandardBalance]:
    """`GET /api/balance`: gross, blocked and net balance."""
    return Call("GET", "/api/balance", reader(StandardBalance), retry_safe=True)


# --- money out -----------------------------------------------------------------------------


def cash_out(order: CashOutRequest, *, scenario: str | None = None) -> Call[CashOutResponse]:
    """`POST /api/pix/cash-out`: pay a PIX key. PENDING at first; the result comes by webhook
    (or in `transactions()`). `scenario` is the sandbox's `X-Sandbox-Scenario`."""
    return _write("/api/pix/cash-out", order, CashOutResponse, scenario, retry_safe=True)


def qr_cash_out(order: QrCashOutRequest, *, scenario: str | None = None) -> Call[QrCashOutResponse]:
    """`POST /api/pix/cash-out-qrcode`: pay a BR Code (copy-and-paste string)."""
    return _write("/api/pix/cash-out-qrcode", order, QrCashOutResponse, scenario, retry_safe=True)


def dict_transfer(
    transfer: DictTransferRequest,
    *,
    idempotency_key: str | None = None,
    scenario: str | None = None,
) -> Call[DictTransferResponse]:
    """`POST /dict/pix`: a transfer to a key looked up in the DICT. The same
    `idempotency_key` answers the same transfer; one is made when none is given."""
    key = idempotency_key or str(uuid.uuid4())
    return Call(
        "POST",
        "/dict/pix",
        reader(DictTransferResponse),
        body=transfer,
        headers={"x-idempotency-key": key, **scenario_header(scenario)},
        retry_safe=True,
    )


# --- money in ------------------------------------------------------------------------------


def cash_in(charge: CashInRequest, *, scenario: str | None = None) -> Call[CashInResponse]:
    """`POST /api/pix/cash-in`: a charge with its copy-and-paste code (and QR image)."""
    return _write("/api/pix/cash-in", charge, CashInResponse, scenario, retry_safe=True)


def create_cob(txid: str, cob: CobRequest) -> Call[CobResponse]:
    """`PUT /cob/{txid}`: an immediate charge under your own txid (26 to 35 letters and
    digits); the same txid again is a 409 `Conflict`."""
    return Call("PUT", f"/cob/{_segment(txid)}", reader(CobResponse), body=cob, retry_safe=True)


def cob(txid: str) -> Call[CobResponse]:
    """`GET /cob/{txid}`."""
    return Call("GET", f"/cob/{_segment(txid)}", reader(CobResponse), retry_safe=True)


def revise_cob(txid: str, patch: CobPatch) -> Call[CobResponse]:
    """`PATCH /cob/{txid}`: a new revision, or `status=REMOVIDA_PELO_USUARIO_RECEBEDOR` to
    cancel it. Never retried: each PATCH makes a revision."""
    return Call("PATCH", f"/cob/{_segment(txid)}", reader(CobResponse), body=patch)


# --- refunds -------------------------------------------------------------------------------


def refund(
    transaction_id: str, request: RefundInRequest, *, scenario: str | None = None
) -> Call[RefundInResponse]:
    """`POST /api/pix/refund-in/{id}`: return (part of) a PIX received. Retried only with
    an `externalId`, which makes a second send a duplicate rather than a second refund."""
    return _write(
        f"/api/pix/refund-in/{_segment(transaction_id)}",
        request,
        RefundInResponse,
        scenario,
        retry_safe=request.externalId is not None,
    )


def devolucao(e2eid: str, refund_id: str, request: DevolucaoRequest) -> Call[DevolucaoResponse]:
    """`PUT /pix/{e2eid}/devolucao/{id}`: a refund by end-to-end id under your own id; the
    same id again answers the first refund."""
    return Call(
        "PUT",
        _devolucao_path(e2eid, refund_id),
        reader(DevolucaoResponse),
        body=request,
        retry_safe=True,
    )


def get_devolucao(e2eid: str, refund_id: str) -> Call[DevolucaoResponse]:
    """`GET /pix/{e2eid}/devolucao/{id}`."""
    return Call(
        "GET", _devolucao_path(e2eid, refund_id), reader(DevolucaoResponse), retry_safe=True
    )


def _devolucao_path(e2eid: str, refund_id: str) -> str:
    return f"/pix/{_segment(e2eid)}/devolucao/{_segment(refund_id)}"


# --- lists ---------------------------------------------------------------------------------


def transactions(
    *,
    status: str | None = None,
    type: str | None = None,
    start_date: Instant | None = None,
    end_date: Instant | None = None,
    external_id: str | None = None,
    end_to_end_id: str | None = None,
    page_size: int = 100,
) -> Listing[ListedTransaction]:
    """`GET /api/transactions`, every page: `status` PENDING/CONFIRMED/ERROR, `type`
    PAYMENT/WITHDRAW/REFUND_IN/REFUND_OUT, dates at most 31 days apart."""
    return _pages(
        "/api/transactions",
        _transaction_page,
        (start_date, end_date),
        status=status,
        type=type,
        externalId=external_id,
        endToEndId=end_to_end_id,
        size=page_size,
    )


def transactions_by_pix_key(
    pix_key: str,
    *,
    status: str | None = None,
    type: str | None = None,
    start_date: Instant | None = None,
    end_date: Instant | None = None,
    page_size: int = 100,
) -> Listing[ListedTransaction]:
    """`GET /api/pix/transactions/pix-key/{pixKey}`, every page."""
    path = f"/api/pix/transactions/pix-key/{_segment(pix_key)}"
    period = (start_date, end_date)
    return _pages(path, _transaction_page, period, status=status, type=type, size=page_size)


def med(
    *,
    status: str | None = None,
    is_reconciled: bool | None = None,
    start_date: Instant | None = None,
    end_date: Instant | None = None,
    page_size: int = 100,
) -> Listing[MedItem]:
    """`GET /api/med`, every page: the MED cases opened against the account."""
    reconciled = None if is_reconciled is None else str(is_reconciled).lower()
    return _pages(
        "/api/med",
        _med_page,
        (start_date, end_date),
        status=status,
        isReconciled=reconciled,
        pageSize=page_size,
    )


def events(
    *,
    type: str | None = None,
    delivery_state: str | None = None,
    start_date: Instant | None = None,
    end_date: Instant | None = None,
    page_size: int = 100,
) -> Listing[EventItem]:
    """`GET /api/events`, every page: the events webhooks report, with their delivery state
    (delivered, pending, failed, none)."""
    return _pages(
        "/api/events",
        _event_page,
        (start_date, end_date),
        type=type,
        deliveryState=delivery_state,
        size=page_size,
    )


def _transaction_page(content: bytes) -> Page[ListedTransaction]:
    page = reader(TransactionPage)(content)
    return Page(page.data, page.metadata.has_next)


def _med_page(content: bytes) -> Page[MedItem]:
    page = reader(MedPage)(content)
    return Page(page.data, page.metadata.page < page.metadata.total_pages)


def _event_page(content: bytes) -> Page[EventItem]:
    page = reader(EventList)(content)
    return Page(page.data, page.metadata.has_next)


def _pages(
    path: str,
    read: Callable[[bytes], Page[T]],
    period: tuple[Instant | None, Instant | None],
    **filters: str | int | None,
) -> Listing[T]:
    """The listing of `path`: its filters, the period as `startDate` and `endDate`."""
    start, end = period
    params: Params = {**filters, "startDate": _iso(start), "endDate": _iso(end)}

    def page(number: int) -> Call[Page[T]]:
        return Call("GET", path, read, params={**params, "page": number}, retry_safe=True)

    return Listing(page)


def _write(
    path: str, body: BaseModel, answer: type[A], scenario: str | None, *, retry_safe: bool
) -> Call[A]:
    return Call(
        "POST",
        path,
        reader(answer),
        body=body,
        headers=scenario_header(scenario),
        retry_safe=retry_safe,
    )
