"""The dashboard's sign-in, sign-out and overview pages, and the 404 page for any other
address (this router comes last in `pixgate.routers`).

Thin like every router: read the form or query, call the service the API calls, render.
Transactions, charges, webhooks and the delivery log have modules of their own.
"""

from __future__ import annotations

import structlog
from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pixgate.accounts.public import RuntimeDep, auth, balances
from pixgate.accounts.public import accounts_service as accounts
from pixgate.core.errors import InvalidCredentials, NotFound, RateLimited
from pixgate.core.http import rate_limit
from pixgate.core.http.intake.allow import declared_methods
from pixgate.dashboard.views import records
from pixgate.dashboard.views import session as sessions
from pixgate.dashboard.views.forms import SignedInForm, SignInForm
from pixgate.dashboard.views.render import (
    DashboardRoute,
    SignedIn,
    clear_cookie,
    login_page,
    page,
    set_cookie,
)
from pixgate.ledger.public import transactions

log = structlog.get_logger(__name__)

router = APIRouter(route_class=DashboardRoute)

RECENT = 10


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


# --- overview ----------------------------------------------------------------------------------


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
            "recent": records.listed(recent.rows),
        },
    )


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
