"""One place that turns every failure into the body of its route family.

Three families, each a property of the router (its `route_class`), never decided per
endpoint (docs/errors.md has the table):

- `EnvelopeRoute`: the token, cash-in and cash-out routes answer the spec's full envelope
  (`code`, `userMessage`, `details`, `errorCode` on business errors).
- `CentralBankRoute`: the Central-Bank-style routes answer the spec's simple body,
  `{statusCode, message, error}`, exactly.
- `ApiPixRoute`: the Central Bank's API Pix under its base path answers RFC 7807 problems
  with the document's types (`pixgate.core.http.problems`); so does a request under that
  path that matches no route.
- every other route, and requests that match no route: the general envelope, the simple
  body plus `code`, `timestamp`, `path`, `method` and `errorId`, with `message` always a
  string (per-field failures in `details.violations`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from http import HTTPStatus
from types import MappingProxyType
from typing import Any, ClassVar

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pixgate.core.errors import (
    DatabaseUnavailable,
    FamilyAnswer,
    InvalidAmount,
    PixgateError,
    TotalOutOfRange,
    TryAgain,
)
from pixgate.core.http import problems
from pixgate.core.http.error_schemas import ApiError, ErrorEnvelope, Problem, SimpleError
from pixgate.core.http.intake.allow import allowed_methods
from pixgate.core.http.intake.json_body import shown_key
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.middleware import new_request_id
from pixgate.core.http.responses import JSONResponse

log = structlog.get_logger(__name__)

CODES_BY_STATUS = {
    400: "HTTP_ERROR",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    422: "UNPROCESSABLE_ENTITY",
    429: "RATE_LIMITED",
    500: "INTERNAL_ERROR",
    503: DatabaseUnavailable.code,
}
"""The general envelope's `code`, by status, for an error naming none (the client reads it too)."""


class Family(StrEnum):
    ENVELOPE = "envelope"
    CENTRAL_BANK = "central_bank"
    API_PIX = "api_pix"
    GENERAL = "general"


ERROR_MODELS: dict[Family, type[BaseModel]] = {
    Family.ENVELOPE: ErrorEnvelope,
    Family.CENTRAL_BANK: SimpleError,
    Family.API_PIX: Problem,
    Family.GENERAL: ApiError,
}


class EnvelopeRoute(PixgateRoute):
    """Marks a router whose errors use the spec's full envelope."""

    family = Family.ENVELOPE


class CentralBankRoute(PixgateRoute):
    """Marks a router of the Central-Bank-style family: the simple body, nothing more."""

    family = Family.CENTRAL_BANK


class ApiPixRoute(PixgateRoute):
    """Marks a router of the Central Bank's API Pix: RFC 7807 problems. `invalid` is the
    resource's 400 type, `resource` names its fields in `violacoes`."""

    family = Family.API_PIX
    invalid: ClassVar[problems.ProblemType] = problems.REQUISICAO_INVALIDA
    resource: ClassVar[str] = ""
    not_found: ClassVar[problems.ProblemType] = problems.NAO_ENCONTRADO


def api_pix_route(
    invalid: problems.ProblemType,
    resource: str,
    *,
    not_found: problems.ProblemType = problems.NAO_ENCONTRADO,
) -> type[ApiPixRoute]:
    """The route class of one resource of the API Pix (its 400 type and field prefix, and
    its 404 type where the document names one of its own)."""
    return type(
        f"ApiPixRoute{invalid.name}",
        (ApiPixRoute,),
        {"invalid": invalid, "resource": resource, "not_found": not_found},
    )


def answering(
    route_class: type[PixgateRoute], answers: Mapping[type[PixgateError], type[FamilyAnswer]]
) -> type[PixgateRoute]:
    """`route_class` whose routes answer the domain errors of `answers` with their family's
    own code: the route picks the code a client sees, the service raises the domain error."""
    return type(
        f"{route_class.__name__}Answering",
        (route_class,),
        {"answers": MappingProxyType(dict(answers))},
    )


def _as_answered(request: Request, exc: PixgateError) -> PixgateError:
    answers: Mapping[type[PixgateError], type[FamilyAnswer]] = getattr(
        request.scope.get("route"), "answers", {}
    )
    for cls in type(exc).__mro__:
        if cls in answers:
            return answers[cls](exc.messages if exc.per_field else exc.text, details=exc.details)
    return exc


def family_of(request: Request) -> Family:
    route = request.scope.get("route")
    if route is None and _under_api_pix(request):
        return Family.API_PIX
    family: Family = getattr(route, "family", Family.GENERAL)
    return family


def _under_api_pix(request: Request) -> bool:
    base: str | None = getattr(request.app.state, "api_pix_base_path", None)
    path = request.url.path
    return base is not None and (path == base or path.startswith(base + "/"))


def problem(
    request: Request,
    status: int,
    messages: list[str],
    *,
    per_field: bool,
    headers: dict[str, str] | None,
) -> JSONResponse:
    """An RFC 7807 problem of the API Pix, in the document's status and type."""
    route = request.scope.get("route")
    invalid = getattr(route, "invalid", problems.REQUISICAO_INVALIDA)
    shown = problems.status_of(status)
    kind = problems.type_of(shown, invalid)
    if shown == 404:
        kind = getattr(route, "not_found", kind)
    body: dict[str, Any] = {
        "type": kind.uri,
        "title": kind.title,
        "status": shown,
        "detail": "; ".join(messages),
        "correlationId": request_id(request),
    }
    if per_field:
        body["violacoes"] = problems.violations(messages, getattr(route, "resource", ""))
    return JSONResponse(body, status_code=shown, headers=headers, media_type=problems.MEDIA_TYPE)


def request_id(request: Request) -> str:
    rid = getattr(request.state, "request_id", None)
    return str(rid) if rid else new_request_id()


def render(
    request: Request,
    status: int,
    *,
    code: str,
    messages: list[str],
    per_field: bool = False,
    user_message: str,
    details: dict[str, Any] | None = None,
    business: bool = False,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """The family's error body. `message` is an array of `field: reason` lines for per-field
    failures (the general family lists them in `details.violations` and joins them), and the
    one sentence otherwise."""
    reason = HTTPStatus(status).phrase
    family = family_of(request)
    if family is Family.API_PIX:
        return problem(request, status, messages, per_field=per_field, headers=headers)
    body: dict[str, Any] = {"statusCode": status}
    message: str | list[str] = messages if per_field else "; ".join(messages)
    if family is Family.CENTRAL_BANK:
        body |= {"message": message, "error": reason}
        return JSONResponse(body, status_code=status, headers=headers)
    if family is Family.GENERAL and per_field:
        details = {"violations": messages, **(details or {})}
        message = "; ".join(messages)
    body |= {
        "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "path": request.url.path,
        "method": request.method,
        "code": code,
        "message": message,
    }
    if family is Family.ENVELOPE:
        body["userMessage"] = user_message
    body["errorId"] = request_id(request)
    body["error"] = reason
    if details is not None:
        body["details"] = details
    if business and family is Family.ENVELOPE:
        body["errorCode"] = code
    return JSONResponse(body, status_code=status, headers=headers)


MAX_VIOLATIONS = 10
"""Problems an answer lists; a count stands for the rest, so the answer stays a few KB."""


def validation_messages(errors: list[Any]) -> list[str]:
    """Pydantic errors as `field: reason` lines, the first `MAX_VIOLATIONS` and a count."""
    messages = []
    for error in errors[:MAX_VIOLATIONS]:
        loc = [part for part in error.get("loc", ()) if part not in ("body", "query", "path")]
        field = ".".join(shown_key(str(part)) for part in loc) or "body"
        text = str(error.get("msg", "invalid"))
        if error.get("type") == "json_invalid":
            field, text = "body", "malformed JSON"
        messages.append(f"{field}: {text}")
    if len(errors) > MAX_VIOLATIONS:
        messages.append(f"body: {len(errors) - MAX_VIOLATIONS} more problems not listed")
    return messages


_WARNINGS: dict[type[PixgateError], str] = {
    DatabaseUnavailable: "request.database_unavailable",
    TryAgain: "request.lost_race",
    TotalOutOfRange: "request.out_of_range",
}
"""The database's faults (`core.db.faults`): expected, logged as warnings with their cause."""


async def on_pixgate_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PixgateError)
    warning = _WARNINGS.get(type(exc))
    if warning is not None and exc.__cause__ is not None:
        log.warning(warning, error=repr(exc.__cause__))
    elif exc.status >= 500:
        log.error("request.failed", code=exc.code, message=exc.text)
    return answer(request, exc)


def answer(request: Request, exc: PixgateError) -> JSONResponse:
    """`exc` in the route's error shape and code, with its headers."""
    exc = _as_answered(request, exc)
    return render(
        request,
        exc.status,
        code=exc.code,
        messages=exc.messages,
        per_field=exc.per_field,
        user_message=exc.user_message,
        details=exc.details,
        business=exc.business,
        headers=exc.headers(),
    )


CODED_FAILURES: dict[str, type[PixgateError]] = {InvalidAmount.code: InvalidAmount}
"""pydantic error types that name a business error (`schemas.common.PixAmount`): a request
whose every failure is of one of them answers that error, with the same `field: reason`
lines, as the spec's cash-outs answer a bad amount."""


async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    messages = validation_messages(errors)
    kinds = {error.get("type") for error in errors}
    coded = CODED_FAILURES.get(str(kinds.pop())) if len(kinds) == 1 else None
    if coded is not None:
        return answer(request, coded(messages))
    return render(
        request,
        400,
        code="HTTP_ERROR",
        messages=messages,
        per_field=True,
        user_message="Some fields are invalid.",
    )


async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(status).phrase
    headers = dict(exc.headers) if exc.headers else {}
    if status == 405:
        headers["Allow"] = allowed_methods(request, headers.get("Allow"))
    return render(
        request,
        status,
        code=CODES_BY_STATUS.get(status, "HTTP_ERROR"),
        messages=[detail],
        user_message=HTTPStatus(status).description or detail,
        headers=headers or None,
    )


async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    """Never a stack trace to the client; the errorId leads to it in the log."""
    log.exception("request.crashed", error_id=request_id(request))
    return render(
        request,
        500,
        code="INTERNAL_ERROR",
        messages=["Internal server error"],
        user_message="Something went wrong. Please try again.",
    )


class AnswerUnexpected:
    """Ends an unexpected exception with the family's 500, on a connection that stays open.

    An `Exception` handler alone runs in Starlette's ServerErrorMiddleware, which sends the
    handler's answer and then re-raises; uvicorn closes the connection of an application that
    raised, so the client's next request on that keep-alive connection failed too. This
    middleware sits inside the access middleware (the 500 is counted and logged there) and
    outside the routes, and the exception ends here. One raised after the answer started
    cannot be answered any more: it propagates, and dropping the connection is then the only
    way to tell the client the body is incomplete.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if started:
                raise
            response = await on_unexpected(Request(scope), exc)
            await response(scope, receive, send)


def install(app: FastAPI) -> None:
    app.add_exception_handler(PixgateError, on_pixgate_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    # Still the last resort for an exception raised by a middleware outside AnswerUnexpected.
    app.add_exception_handler(Exception, on_unexpected)
    app.add_middleware(AnswerUnexpected)


def openapi_responses(
    *errors: type[PixgateError], family: Family = Family.ENVELOPE
) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route, built from the error classes it can raise (in the API Pix,
    at the document's status each is answered with)."""
    by_status: dict[int, list[str]] = {}
    for error in errors:
        status = problems.status_of(error.status) if family is Family.API_PIX else error.status
        by_status.setdefault(status, []).append(error.code)
    return {
        status: {
            "description": "Error codes: " + ", ".join(sorted(codes)),
            "model": ERROR_MODELS[family],
        }
        for status, codes in by_status.items()
    }
