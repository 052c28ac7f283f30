"""The dashboard's sign-in, sign-out, overview, transactions and charges pages.

Thin like every router: read the form or query, call the service the API calls, render.
Webhooks and the delivery log are in `dashboard_webhooks`.
"""

from __future__ import annotations

import uuid
from uuid import UUID

import structlog
from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from pixgate.accounts.public import RuntimeDep, auth, balances
from pixgate.accounts.public import accounts_service as accounts
from pixgate.charges.public import CashInPayer, CashInTransaction, cash_in, qr_code_png
from pixgate.core.errors import (
    DuplicateExternalId,
    InvalidCredentials,
    NotFound,
    ProviderExpirationBelowMinimum,
    RateLimited,
    ValidationFailed,
)
from pixgate.core.http import rate_limit
from pixgate.core.http.allow import declared_methods
from pixgate.dashboard.views import messages
from pixgate.dashboard.views import session as sessions
from pixgate.dashboard.views.forms import SignedInForm, SignInForm, field
from pixgate.dashboard.views.render import (
    DashboardRoute,
    Signed,
    SignedIn,
    clear_cookie,
    login_page,
    page,
    set_cookie,
)
from pixgate.ledger.public import TransactionPage, transactions
from pixgate.runtime import Runtime

log = structlog.get_logger(__name__)

router = APIRouter(route_class=DashboardRoute)

RECENT = 10
PAGE_SIZES = (10, 20, 50, 100)
STATUSES = ("PENDING", "CONFIRMED", "ERROR")
OPERATIONS = ("PAYMENT", "WITHDRAW", "REFUND_IN", "REFUND_OUT")
MAX_PAGE = 2_147_483_647


# --- sign-in and sign-out -------------------------------------------------------------------


@router.get("/dashboard/login")
async def login_form(request: Request, rt: RuntimeDep) -> Response:
    return login_page(request, rt)


@router.post("/dashboard/login")
async def login(request: Request, rt: RuntimeDep, posted: SignInForm) -> Response:
    """The token endpoint's credential checks, minus the certificate; failures are limited
    per clientId and per client address, and both halves fail alike. The session's life is
    counted on the runtime's clock, as every page reads it (`render.signed_in`)."""
    client_id = posted.client_id
    limit = rate_limit.item(rt.settings.dashboard_login_rate_limit)
    keys = (
        ("dashboard-login-client", rate_limit.client_key(client_id)),
        ("dashboard-login-address", request.client.host if request.client else "-"),
    )
    try:
        for scope, key in keys:
            await rate_limit.refuse_if_spent(request, rt, limit, scope, key)
    except RateLimited as exc:
        return login_page(
            request,
            rt,
            status=429,
            error=f"Too many failed sign-ins. Try again in {exc.retry_after} seconds.",
            client_id=client_id,
            headers=exc.headers(),
        )
    try:
        principal = await auth.sign_in(rt, client_id, posted.secret)
    except InvalidCredentials:
        for scope, key in keys:
            await rate_limit.count(request, rt, limit, scope, key)
        log.info("dashboard.sign_in_failed")
        return login_page(
            request,
            rt,
            status=401,
            error="Invalid clientId or clientSecret.",
            client_id=client_id,
        )
    cookie, _ = sessions.issue(
        rt.dashboard_key,
        principal.client_id,
        now=rt.clock.now(),
        ttl=rt.settings.dashboard_session_ttl_s,
    )
    log.info("dashboard.signed_in", account_id=principal.account_id)
    response = RedirectResponse("/dashboard", status_code=303)
    set_cookie(
        request, response, sessions.SESSION_COOKIE, cookie, rt.settings.dashboard_session_ttl_s
    )
    clear_cookie(request, response, sessions.LOGIN_COOKIE)
    return response


@router.post("/dashboard/logout")
async def logout(request: Request, _posted: SignedInForm) -> Response:
    response = RedirectResponse("/dashboard/login", status_code=303)
    clear_cookie(request, response, sessions.SESSION_COOKIE)
    return response


# --- overview and transactions --------------------------------------------------------------


@router.get("/dashboard")
async def overview(request: Request, rt: RuntimeDep, signed: SignedIn) -> Response:
    account = await accounts.get(rt, signed.account_id)
    balance = await balances.get(rt, signed.account_id)
    recent = await transactions.statement(
        rt, signed.account_id, transactions.ListQuery(size=RECENT)
    )
    return page(
        request,
        rt,
        "overview.html",
        {
            "signed": signed,
            "account": account,
            "balance": balance,
            "recent": TransactionPage.of(recent).model_dump()["data"],
        },
    )


def _whole(text: str, name: str, default: int, low: int, high: int, problems: list[str]) -> int:
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
    number = _whole(params.get("page", ""), "page", 1, 1, MAX_PAGE, problems)
    size = _whole(params.get("size", ""), "size", 20, 1, PAGE_SIZES[-1], problems)
    if filters["status"] and filters["status"] not in STATUSES:
        problems.append("status: one of " + ", ".join(STATUSES))
    if filters["type"] and filters["type"] not in OPERATIONS:
        problems.append("type: one of " + ", ".join(OPERATIONS))
    result = None
    if not problems:
        try:
            result = await transactions.statement(
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
            "result": None if result is None else TransactionPage.of(result).model_dump(),
            "kept": kept,
        },
        status=400 if problems else 200,
    )


# --- charges --------------------------------------------------------------------------------


def _charge_form(
    request: Request,
    rt: Runtime,
    signed: Signed,
    values: dict[str, str],
    problems: list[str],
    status: int = 200,
) -> HTMLResponse:
    return page(
        request,
        rt,
        "charges.html",
        {"signed": signed, "values": values, "problems": problems},
        status=status,
    )


CHARGE_FIELDS = ("value", "description", "externalId", "payerName", "payerDocument", "expiration")


@router.get("/dashboard/charges")
async def charge_form(request: Request, rt: RuntimeDep, signed: SignedIn) -> Response:
    values = dict.fromkeys(CHARGE_FIELDS, "") | {"expiration": "3600"}
    return _charge_form(request, rt, signed, values, [])


@router.post("/dashboard/charges")
async def create_charge(request: Request, rt: RuntimeDep, posted: SignedInForm) -> Response:
    """A cash-in charge, validated as POST /api/pix/cash-in validates it."""
    signed, form = posted.signed, posted.form
    values = {name: field(form, name) for name in CHARGE_FIELDS}
    try:
        tx = CashInTransaction.model_validate(
            {
                "value": values["value"].replace(",", "."),
                "description": values["description"],
                "externalId": values["externalId"] or f"dashboard-{uuid.uuid4().hex[:16]}",
                "expirationTime": values["expiration"] or "3600",
            }
        )
        payer = CashInPayer.model_validate(
            {"fullName": values["payerName"], "document": values["payerDocument"]}
        )
        created = await cash_in.create(
            rt,
            signed.account_id,
            cash_in.CashInOrder(
                value=tx.value,
                description=tx.description,
                external_id=tx.externalId,
                expiration_time=tx.expirationTime,
                payer_name=payer.fullName,
                payer_document=payer.document,
            ),
        )
    except ValidationError as exc:
        return _charge_form(request, rt, signed, values, messages.reasons(exc.errors()), 400)
    except (ValidationFailed, DuplicateExternalId, ProviderExpirationBelowMinimum) as exc:
        problems = exc.messages
        return _charge_form(request, rt, signed, values, problems, 400)
    return RedirectResponse(f"/dashboard/charges/{created.transaction_id}", status_code=303)


@router.get("/dashboard/charges/{transaction_id}")
async def charge(
    request: Request, rt: RuntimeDep, signed: SignedIn, transaction_id: UUID
) -> Response:
    found = await cash_in.find(rt, signed.account_id, transaction_id)
    return page(request, rt, "charge.html", {"signed": signed, "charge": found})


@router.get("/dashboard/charges/{transaction_id}/qr.png")
async def charge_qr(
    request: Request, rt: RuntimeDep, signed: SignedIn, transaction_id: UUID
) -> Response:
    """The copy-and-paste code as a QR image (error correction M, as the API draws it)."""
    found = await cash_in.find(rt, signed.account_id, transaction_id)
    return Response(qr_code_png(found.pix_code), media_type="image/png")


# --- anything else under /dashboard ---------------------------------------------------------


@router.get("/dashboard/{rest:path}")
async def not_found(request: Request, rest: str) -> Response:
    """An HTML 404 for every other address under /dashboard (declared last); a 405 for an
    address whose own routes take other methods (GET on the sign-out form's address)."""
    if rest == "":
        return RedirectResponse("/dashboard", status_code=308)
    allow = declared_methods(request)
    if allow:
        raise StarletteHTTPException(405, headers={"Allow": allow})
    raise NotFound("There is no such page in the dashboard.")
