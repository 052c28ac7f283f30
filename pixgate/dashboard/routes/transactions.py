"""The dashboard's transactions: the statement (GET /api/transactions's filters and paging,
as a form) and one transaction's page: its facts, status history, error reason, the webhook
deliveries that told of it, and its QR code when it is a charge."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter, Request, Response

from pixgate.accounts.public import RuntimeDep
from pixgate.charges.public import cash_in
from pixgate.core.errors import NotFound, ValidationFailed
from pixgate.dashboard.views import records
from pixgate.dashboard.views.render import DashboardRoute, SignedIn, page
from pixgate.ledger.public import PageMetadata, transactions
from pixgate.webhooks.public import service as webhooks

router = APIRouter(route_class=DashboardRoute)

PAGE_SIZES = (10, 20, 50, 100)
STATUSES = ("PENDING", "CONFIRMED", "ERROR")
OPERATIONS = ("PAYMENT", "WITHDRAW", "REFUND_IN", "REFUND_OUT")
MAX_PAGE = 2_147_483_647
EVENTS_SHOWN = 50
"""A transaction's webhook events on its page (a handful in practice: one per change)."""


def whole(text: str, name: str, default: int, low: int, high: int, problems: list[str]) -> int:
    """A query's whole number in [low, high]; empty reads as `default`, anything else is a
    problem named after the field."""
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        problems.append(f"{name}: a whole number from {low} to {high}")
        return default
    return int(text)


@router.get("/dashboard/transactions")
async def transaction_list(request: Request, rt: RuntimeDep, signed: SignedIn) -> Response:
    """GET /api/transactions's filters and paging, as a form."""
    params = request.query_params
    filters = {
        name: params.get(name, "").strip()[:255]
        for name in ("status", "type", "startDate", "endDate", "externalId", "endToEndId")
    }
    problems: list[str] = []
    number = whole(params.get("page", ""), "page", 1, 1, MAX_PAGE, problems)
    size = whole(params.get("size", ""), "size", 20, 1, PAGE_SIZES[-1], problems)
    if filters["status"] and filters["status"] not in STATUSES:
        problems.append("status: one of " + ", ".join(STATUSES))
    if filters["type"] and filters["type"] not in OPERATIONS:
        problems.append("type: one of " + ", ".join(OPERATIONS))
    found = None
    if not problems:
        try:
            found = await transactions.statement(
                rt,
                signed.account_id,
                transactions.ListQuery(
                    number,
                    size,
                    filters["status"] or None,
                    filters["type"] or None,
                    filters["startDate"] or None,
                    filters["endDate"] or None,
                    filters["externalId"] or None,
                    filters["endToEndId"] or None,
                ),
            )
        except ValidationFailed as exc:
            problems = exc.messages
    kept = {k: v for k, v in filters.items() if v} | {"size": str(size)}
    return page(
        request,
        rt,
        "transactions.html",
        {
            "signed": signed,
            "filters": filters,
            "size": size,
            "sizes": PAGE_SIZES,
            "statuses": STATUSES,
            "operations": OPERATIONS,
            "problems": problems,
            "items": None if found is None else records.listed(found.rows),
            "meta": None
            if found is None
            else PageMetadata.model_validate(
                PageMetadata.values_of(found.page, found.size, found.total, more=found.more)
            ).model_dump(),
            "kept": kept,
        },
        status=400 if problems else 200,
    )


@router.get("/dashboard/transactions/{transaction_uuid}")
async def transaction_page(
    request: Request, rt: RuntimeDep, signed: SignedIn, transaction_uuid: UUID
) -> Response:
    """One of the account's transactions; another account's answers 404 like an unknown id."""
    row = await transactions.get(rt, signed.account_id, transaction_uuid)
    try:
        charge = await cash_in.find(rt, signed.account_id, transaction_uuid)
    except NotFound:
        charge = None
    log = await webhooks.delivery_log(
        rt, signed.account_id, transaction_id=transaction_uuid, size=EVENTS_SHOWN
    )
    return page(
        request,
        rt,
        "transaction.html",
        {
            "signed": signed,
            "t": records.listed([row])[0],
            "row": row,
            "history": records.history(row),
            "charge": charge,
            "log": log,
        },
    )
