"""The screen every request passes before its route's own work: input no route can use is refused.

PostgreSQL's text and JSON types cannot hold U+0000, so a NUL in a path or query parameter, a
header the route reads or a JSON string would fail deep inside a statement (a 500) if it got
that far. Refused here, for every route at once, with a 400 in the route's family naming the
field. Then a body in another format is a clear 415, not a confusing field error.

It runs in the route class (`routing.PixgateRoute`), before FastAPI reads the body and solves
the dependencies, not as a dependency of the app: each dependency costs FastAPI a resolution
pass on every request (docs/performance.md, "One dependency per authenticated operation").
What it needs of a route (the headers its dependencies declare, whether it reads a form or
JSON) is found once, when the route is built.

Cheap on purpose, every request pays it (GET /accounts/balances: two substring searches of
short strings and an attribute lookup): the headers searched are only those the route
declares (uvicorn itself refuses a NUL byte in any header field), and a JSON body is parsed
once, exactly (`routing.ExactJsonRequest`), and walked once by `json_body.first_problem`,
which also bounds its shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.params import Form
from starlette.requests import ClientDisconnect

from pixgate.core.errors import UnsupportedMediaType, ValidationFailed
from pixgate.core.http.intake import json_body
from pixgate.core.http.intake.json_body import NUL_REASON
from pixgate.core.http.middleware import BodyTooLarge

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


@dataclass(frozen=True, slots=True)
class Screen:
    """What one route's screen checks, found when the route is built."""

    headers: frozenset[bytes]
    """The header parameters of the route's dependencies, lower-case, as ASGI has them."""
    form_limit: int | None
    """A route that reads a form: how large one may be (its route class says)."""
    reads_json: bool
    """Whether the route takes a JSON body (FastAPI parses one only then)."""

    @classmethod
    def of(cls, dependant: Dependant, body_field: object, form_limit: int | None) -> Screen:
        reads_form = isinstance(getattr(body_field, "field_info", None), Form)
        return cls(
            headers=frozenset(_header_names(dependant)),
            form_limit=form_limit,
            reads_json=body_field is not None and not reads_form,
        )

    async def check(self, request: Request) -> None:
        """Raise the route's 400, 413 or 415 for input it cannot use."""
        scope = request.scope
        if "\x00" in scope["path"]:
            raise ValidationFailed([f"{_nul_path_param(request)}: {NUL_REASON}"])
        query = scope["query_string"]
        if b"%00" in query or b"\x00" in query:
            raise ValidationFailed([f"{_nul_query_param(request)}: {NUL_REASON}"])
        if self.headers:
            for name, value in scope["headers"]:
                if name in self.headers and b"\x00" in value:
                    raise ValidationFailed([f"{name.decode('latin-1')}: {NUL_REASON}"])
        if scope["method"] not in _BODY_METHODS:
            return
        if self.form_limit is not None:
            if len(await request.body()) > self.form_limit:
                raise BodyTooLarge(self.form_limit)
            return  # a form is read by its route (the token route's after the certificate)
        media = _require_json(request)
        if self.reads_json and media:
            await self._check_json(request)

    async def _check_json(self, request: Request) -> None:
        """The parsed body, walked once; kept on the request for FastAPI to validate."""
        try:
            parsed = await request.json()
        except (ValueError, ClientDisconnect):
            return  # malformed or cut short: FastAPI's own read of the body answers it
        problem = json_body.first_problem(parsed)
        if problem is not None:
            raise ValidationFailed([problem])


def _header_names(dependant: Dependant) -> Iterator[bytes]:
    for field in dependant.header_params:
        yield field.alias.lower().encode("latin-1")
    for sub in dependant.dependencies:
        yield from _header_names(sub)


def _nul_path_param(request: Request) -> str:
    return next((k for k, v in request.path_params.items() if "\x00" in str(v)), "path")


def _nul_query_param(request: Request) -> str:
    return next(
        (
            k.replace("\x00", "\\u0000")
            for k, v in request.query_params.multi_items()
            if "\x00" in k or "\x00" in v
        ),
        "query",
    )


def _require_json(request: Request) -> str:
    """The media type of a body, if the request has one; a body in another format is a clear
    415, not a confusing field error."""
    headers = request.headers
    has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
    if not has_body:
        return ""
    media = media_type(request)
    if media and media != "application/json" and not media.endswith("+json"):
        raise UnsupportedMediaType(f"Content-Type {media} is not supported; use application/json")
    return media


def media_type(request: Request) -> str:
    """The body's media type as the request names it, lowercased, its parameters aside
    (`application/json; charset=utf-8` is `application/json`); "" without a Content-Type."""
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
