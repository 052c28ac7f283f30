"""Dependencies every router shares: the runtime, the calling account, JSON bodies.

All are `async def`: FastAPI runs plain `def` dependencies in a thread pool, a thread
hand-off per dependency on every request (docs/performance.md, "Asynchronous dependencies,
no telemetry probe").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, Header, Request
from fastapi.dependencies.models import Dependant
from pydantic import WithJsonSchema

from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.service import auth
from pixgate.core.errors import Forbidden, NotFound, UnsupportedMediaType, ValidationFailed
from pixgate.core.http import json_body
from pixgate.core.http.json_body import NUL_REASON
from pixgate.core.http.middleware import BodyTooLarge
from pixgate.core.http.routing import ExactJsonRequest
from pixgate.provider.base import Instructions
from pixgate.runtime import Runtime
from pixgate.sandbox.public import rules as scenarios


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def get_runtime(request: Request) -> Runtime:
    return _runtime(request)


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


class ScopeCheck:
    """The dependency of an operation that needs one scope: the caller, if its token holds it.

    Every authenticated operation takes one (`granted`): one instance per scope, so FastAPI's
    per-request cache and the OpenAPI pass (`pixgate.openapi`, which declares the 401 and the
    403) see the same object; the check is one lookup in the token's frozenset, on the hot
    path of every authenticated request. It authenticates the caller itself, with the runtime
    taken from the request rather than from `RuntimeDep`: each level of dependencies costs
    FastAPI a resolution pass on every request (docs/performance.md, "Dependencies one level
    deep").
    """

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self._refusal = f"the access token lacks the scope {scope}"

    async def __call__(self, request: Request) -> auth.Principal:
        headers = request.headers
        who = auth.authenticate(
            _runtime(request), headers.get("authorization"), headers.get("x-ssl-client-cert")
        )
        if self.scope in who.scopes:
            return who
        raise Forbidden(self._refusal)


def authenticates(call: object) -> bool:
    """Whether a dependency authenticates the caller (for the OpenAPI pass and the tests)."""
    return isinstance(call, ScopeCheck)


_CHECKS = {scope: ScopeCheck(scope) for scope in Scope}


def granted(scope: Scope) -> Any:
    """The caller of an operation that needs `scope`:
    `who: Annotated[auth.Principal, granted(Scope.PIX_WRITE)]`; 403 in the route's family
    when the token lacks it (a token narrowed by the `scope` of its request)."""
    return Depends(_CHECKS[scope])


SCENARIO_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "enum": list(scenarios.NAMED)},
        {"type": "string", "pattern": scenarios.DELAY_PATTERN},
    ],
}
ScenarioHeader = Annotated[
    str | None,
    Header(
        description="Sandbox only: how the simulated settling bank behaves for this "
        "request; case-insensitive. INSUFFICIENT_FUNDS, INVALID_PIX_KEY and "
        "PROVIDER_UNAVAILABLE answer at once as the real error would (PROVIDER_UNAVAILABLE is "
        "a 500 by design); the others end the transaction in ERROR with that errorCode at "
        "settlement; WEBHOOK_DELAY holds the final state back 5 s; DELAY_<n>MS sets the "
        f"settlement delay (n at most {scenarios.MAX_DELAY_MS}). Outside sandbox mode: 400.",
    ),
    WithJsonSchema(SCENARIO_SCHEMA),
]


async def sandbox_scenario(
    request: Request, x_sandbox_scenario: ScenarioHeader = None
) -> Instructions:
    """The canonical `X-Sandbox-Scenario`, as the request's provider instructions (only the
    provider reads them); refused outside sandbox mode."""
    if x_sandbox_scenario is not None and not _runtime(request).settings.sandbox:
        raise ValidationFailed(["X-Sandbox-Scenario is only accepted in sandbox mode"])
    return Instructions(scenarios.parse(x_sandbox_scenario))


ProviderInstructions = Annotated[Instructions, Depends(sandbox_scenario)]


async def sandbox_only(rt: RuntimeDep) -> None:
    """Sandbox routes do not exist outside sandbox mode."""
    if not rt.settings.sandbox:
        raise NotFound("Not Found")


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


async def screen_request(request: Request) -> None:
    """Every route's first dependency: input no route can use is refused before any other work.

    PostgreSQL's text and JSON types cannot hold U+0000, so a NUL in a path or query
    parameter, a header the route reads or a JSON string would fail deep inside a statement
    (a 500) if it got that far. Refused here, for every route at once, with a 400 in the
    route's family naming the field. Then a body in another format is a clear 415, not a
    confusing field error.

    Cheap on purpose, every request pays it (GET /accounts/balances: two substring searches
    of short strings and an attribute lookup): the headers searched are only those the
    route declares (uvicorn itself refuses a NUL byte in any header field), and a JSON body,
    already parsed, is walked once by `json_body.first_problem`, which also bounds its shape.
    """
    scope = request.scope
    if "\x00" in scope["path"]:
        raise ValidationFailed([f"{_nul_path_param(request)}: {NUL_REASON}"])
    query = scope["query_string"]
    if b"%00" in query or b"\x00" in query:
        raise ValidationFailed([f"{_nul_query_param(request)}: {NUL_REASON}"])
    route = scope.get("route")
    declared = getattr(route, "_pixgate_headers", None)
    if declared is None:
        declared = _declared_headers(route)
    if declared:
        for name, value in scope["headers"]:
            if name in declared and b"\x00" in value:
                raise ValidationFailed([f"{name.decode('latin-1')}: {NUL_REASON}"])
    if scope["method"] not in _BODY_METHODS:
        return
    form_limit = getattr(route, "form_body_bytes", None)
    if form_limit is not None:
        if len(await request.body()) > form_limit:
            raise BodyTooLarge(form_limit)
        return  # a form is read by its route (the token route's after the certificate)
    _require_json(request)
    if isinstance(request, ExactJsonRequest) and request.has_json:
        problem = json_body.first_problem(await request.json())
        if problem is not None:
            raise ValidationFailed([problem])


def _declared_headers(route: Any) -> frozenset[bytes]:
    """The header parameters of a route's dependencies (lower-case, as ASGI has them),
    found on the route's first request and kept on it."""
    if route is None:
        return frozenset()
    found = frozenset(_header_names(route.dependant))
    route._pixgate_headers = found
    return found


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


def _require_json(request: Request) -> None:
    """A body in another format is a clear 415, not a confusing field error."""
    content_type = request.headers.get("content-type", "")
    has_body = request.headers.get("content-length", "0") != "0" or "transfer-encoding" in (
        request.headers
    )
    media = content_type.split(";", 1)[0].strip().lower()
    if has_body and media and media != "application/json" and not media.endswith("+json"):
        raise UnsupportedMediaType(f"Content-Type {media} is not supported; use application/json")
