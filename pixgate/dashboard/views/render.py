"""How the dashboard answers: Jinja2 pages, HTML error pages, its security headers, and
who is signed in.

Every dashboard route uses `DashboardRoute`: whatever a page raises (a PixgateError, a
validation error, an HTTP error, anything unexpected) becomes an HTML page with the right
status, never the API's JSON envelopes; a request without a live session is sent to the
sign-in page, and a sign-in form whose token no longer holds is shown again. Each answer
carries a strict Content-Security-Policy (every asset is the gateway's own, no inline script
or style) and `Cache-Control: no-store`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any
from zoneinfo import ZoneInfo

import jinja2
import structlog
from fastapi import Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pixgate.accounts.public import RuntimeDep, auth
from pixgate.core.errors import DatabaseUnavailable, PixgateError, TryAgain
from pixgate.core.http.errors import request_id
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.dashboard.views import labels, messages
from pixgate.dashboard.views import session as sessions
from pixgate.runtime import Runtime

log = structlog.get_logger(__name__)

LOGIN_PATH = "/dashboard/login"
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

templates = jinja2.Environment(
    loader=jinja2.PackageLoader("pixgate.dashboard", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _brl(value: float | int | Decimal | None) -> str:
    """1234.5 -> `R$ 1.234,50` (the Brazilian grouping)."""
    if value is None:
        return ""
    text = f"{Decimal(str(value)):,.2f}"
    return "R$ " + text.replace(",", "_").replace(".", ",").replace("_", ".")


def _cents(value: int | None) -> str:
    return "" if value is None else _brl(Decimal(value) / 100)


templates.filters["brl"] = _brl
templates.filters["cents"] = _cents
templates.filters["status"] = labels.status_label
templates.filters["badge"] = labels.badge


class SignedOut(Exception):
    """No live session: the page answers a redirect to the sign-in page."""


class SignInExpired(Exception):
    """The sign-in form's token does not match its nonce cookie (the cookie expired, or the
    form came from another site): the form is shown again, 403, with the clientId typed."""

    def __init__(self, client_id: str) -> None:
        super().__init__("the sign-in form expired")
        self.client_id = client_id


@dataclass(frozen=True, slots=True)
class Signed:
    principal: auth.Principal
    session: sessions.Session
    csrf: str

    @property
    def account_id(self) -> int:
        return self.principal.account_id


async def signed_in(request: Request, rt: RuntimeDep) -> Signed:
    """The session of the request's cookie, judged on the runtime's clock (as it was issued),
    and its credential's account, re-read; else `SignedOut`."""
    found = sessions.read(
        rt.dashboard_key, request.cookies.get(sessions.SESSION_COOKIE), now=rt.clock.now()
    )
    if found is None:
        raise SignedOut
    principal = await auth.signed_in(rt, found.client_id)
    if principal is None:
        raise SignedOut
    return Signed(principal, found, sessions.csrf_token(rt.dashboard_key, found))


SignedIn = Annotated[Signed, Depends(signed_in)]


def page(
    request: Request,
    rt: Runtime,
    template: str,
    context: Mapping[str, Any],
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    zone = ZoneInfo(rt.settings.timezone)

    def when(value: datetime | str | None) -> str:
        return labels.local_time(value, zone)

    shown = dict(context)
    if "problems" in shown:  # every form's and error page's refusals, said for people
        shown["problems"] = messages.labelled(shown["problems"])
    html = templates.get_template(template).render(
        {"path": request.url.path, "signed": None, "when": when, "zone": zone.key, **shown}
    )
    return HTMLResponse(html, status_code=status, headers=dict(headers or {}))


def is_https(request: Request) -> bool:
    """Behind the TLS front (X-Forwarded-Proto, as deploy/nginx sets it) or TLS itself."""
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=sessions.PATH,
        httponly=True,
        samesite="strict",
        secure=is_https(request),
    )


def clear_cookie(request: Request, response: Response, name: str) -> None:
    response.delete_cookie(
        name, path=sessions.PATH, httponly=True, samesite="strict", secure=is_https(request)
    )


def login_page(
    request: Request,
    rt: Runtime,
    *,
    status: int = 200,
    error: str | None = None,
    client_id: str = "",
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    """The sign-in form, with a fresh nonce cookie and the CSRF token bound to it."""
    nonce = sessions.new_login_nonce()
    response = page(
        request,
        rt,
        "login.html",
        {
            "csrf": sessions.login_csrf_token(rt.dashboard_key, nonce),
            "error": error,
            "client_id": client_id,
        },
        status=status,
        headers=headers,
    )
    set_cookie(request, response, sessions.LOGIN_COOKIE, nonce, sessions.LOGIN_NONCE_TTL_S)
    return response


def error_page(request: Request, exc: Exception) -> Response:
    if isinstance(exc, DatabaseUnavailable):  # a 503 with Retry-After, as the API answers
        log.warning("dashboard.database_unavailable", error=repr(exc.__cause__ or exc))
    if isinstance(exc, TryAgain):  # rolled back whole: sending the form again goes through
        log.warning("dashboard.lost_race", error=repr(exc.__cause__ or exc))
    rt: Runtime = request.app.state.runtime
    if isinstance(exc, SignedOut):
        response: Response = RedirectResponse(LOGIN_PATH, status_code=303)
        clear_cookie(request, response, sessions.SESSION_COOKIE)
        return response
    if isinstance(exc, SignInExpired):
        return login_page(
            request,
            rt,
            status=403,
            error="The sign-in form expired. Please sign in again.",
            client_id=exc.client_id,
        )
    headers: dict[str, str] = {}
    problems: list[str] = []
    if isinstance(exc, PixgateError):
        status, title = exc.status, exc.user_message
        if exc.status < 500:
            problems = exc.messages
        headers = exc.headers() or {}
    elif isinstance(exc, RequestValidationError):
        status, title = 400, "Some fields are invalid."
        problems = messages.reasons(exc.errors())
    elif isinstance(exc, StarletteHTTPException):
        status, title = exc.status_code, str(exc.detail)
        headers = dict(exc.headers or {})
    else:
        log.exception("dashboard.crashed", error_id=request_id(request))
        status, title = 500, "Something went wrong. Please try again."
    if status >= 500 and isinstance(exc, PixgateError) and not isinstance(exc, DatabaseUnavailable):
        log.error("dashboard.failed", code=exc.code, message=exc.text)
    return page(
        request,
        rt,
        "error.html",
        {"status": status, "title": title, "problems": problems, "error_id": request_id(request)},
        status=status,
        headers=headers,
    )


class DashboardRoute(PixgateRoute):
    """A dashboard page: HTML answers and errors, form bodies, no OpenAPI entry."""

    form_body_bytes = 64 * 1024

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        kwargs["include_in_schema"] = False
        super().__init__(path, endpoint, **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                response = await handler(request)
            except Exception as exc:  # every failure of a page is an HTML page
                response = error_page(request, exc)
            for name, value in SECURITY_HEADERS.items():
                response.headers.setdefault(name, value)
            return response

        return answer
