"""Dependencies every router shares: the runtime, the calling account, sandbox instructions.

All are `async def`: FastAPI runs plain `def` dependencies in a thread pool, a thread
hand-off per dependency on every request (docs/performance.md, "Asynchronous dependencies,
no telemetry probe").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated, Any

from fastapi import Depends, Request

from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.service import auth
from pixgate.core.errors import Forbidden, NotFound, ValidationFailed
from pixgate.provider.base import NO_INSTRUCTIONS, Instructions
from pixgate.runtime import Runtime
from pixgate.sandbox.public import rules as scenarios


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def get_runtime(request: Request) -> Runtime:
    return _runtime(request)


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated request as its operation sees it: who calls, the runtime serving the
    request, and the provider instructions of an operation that takes `X-Sandbox-Scenario`.

    One dependency (`granted`) gives all three: each dependency costs FastAPI a resolution
    pass on every request, about 3 % of a cash-out's instructions (docs/performance.md, "One
    dependency per authenticated operation").
    """

    rt: Runtime
    principal: auth.Principal
    instructions: Instructions = NO_INSTRUCTIONS

    @property
    def account_id(self) -> int:
        """The account every query of the request is scoped to."""
        return self.principal.account_id


class ScopeCheck:
    """The dependency of an operation that needs one scope: the caller, if its token holds it.

    Every authenticated operation takes one (`granted`): one instance per scope, so FastAPI's
    per-request cache and the OpenAPI pass (`pixgate.openapi`, which declares the 401 and the
    403) see the same object; the check is one lookup in the token's frozenset, on the hot
    path of every authenticated request. It takes the runtime from the request and gives it
    with the caller, rather than depending on `RuntimeDep`.
    """

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self._refusal = f"the access token lacks the scope {scope}"

    async def __call__(self, request: Request) -> Caller:
        return self._caller(request)

    def _caller(self, request: Request) -> Caller:
        headers = request.headers
        rt = _runtime(request)
        who = auth.authenticate(rt, headers.get("authorization"), headers.get("x-ssl-client-cert"))
        if self.scope in who.scopes:
            return Caller(rt, who)
        raise Forbidden(self._refusal)


SCENARIO_PARAMETER: dict[str, Any] = {
    "name": "x-sandbox-scenario",
    "in": "header",
    "required": False,
    "schema": {
        "anyOf": [
            {"type": "string", "enum": list(scenarios.NAMED)},
            {"type": "string", "pattern": scenarios.DELAY_PATTERN},
        ],
        "title": "X-Sandbox-Scenario",
    },
    "description": "Sandbox only: how the simulated settling bank behaves for this "
    "request; case-insensitive. INSUFFICIENT_FUNDS, INVALID_PIX_KEY and "
    "PROVIDER_UNAVAILABLE answer at once as the real error would (PROVIDER_UNAVAILABLE is "
    "a 500 by design); the others end the transaction in ERROR with that errorCode at "
    "settlement; WEBHOOK_DELAY holds the final state back 5 s; `DELAY_<n>MS` sets the "
    f"settlement delay (n at most {scenarios.MAX_DELAY_MS}). Outside sandbox mode: 400.",
}
"""`X-Sandbox-Scenario` as the OpenAPI document declares it on the operations that take it
(`pixgate.openapi`): `ScenarioScopeCheck` reads the header itself."""


class ScenarioScopeCheck(ScopeCheck):
    """`ScopeCheck` for an operation the sandbox can be told how to settle: the caller with
    the canonical `X-Sandbox-Scenario` as its provider instructions (only the provider reads
    them), refused outside sandbox mode, once the caller is authenticated.

    The header is read here rather than declared as a FastAPI `Header` parameter: a declared
    parameter costs FastAPI a pass of its own on every request of every such operation,
    about 4 % of a cash-out's instructions (docs/performance.md, "The scenario header read
    by its dependency"). `parse` is its validation; the OpenAPI document declares it
    (`SCENARIO_PARAMETER`)."""

    async def __call__(self, request: Request) -> Caller:
        caller = self._caller(request)
        scenario = request.headers.get("x-sandbox-scenario")
        if scenario is None:
            return caller
        if not caller.rt.settings.sandbox:
            raise ValidationFailed(["X-Sandbox-Scenario is only accepted in sandbox mode"])
        return replace(caller, instructions=Instructions(scenarios.parse(scenario)))


def authenticates(call: object) -> bool:
    """Whether a dependency authenticates the caller (for the OpenAPI pass and the tests)."""
    return isinstance(call, ScopeCheck)


def takes_scenario(call: object) -> bool:
    """Whether a dependency reads `X-Sandbox-Scenario` (for the OpenAPI pass and the tests)."""
    return isinstance(call, ScenarioScopeCheck)


_CHECKS = {scope: ScopeCheck(scope) for scope in Scope}
_SCENARIO_CHECKS = {scope: ScenarioScopeCheck(scope) for scope in Scope}


def granted(scope: Scope, *, scenario: bool = False) -> Any:
    """The caller of an operation that needs `scope`:
    `caller: Annotated[Caller, granted(Scope.PIX_WRITE)]`; 403 in the route's family when the
    token lacks it (a token narrowed by the `scope` of its request). `scenario`: the operation
    takes `X-Sandbox-Scenario` (`Caller.instructions`)."""
    return Depends((_SCENARIO_CHECKS if scenario else _CHECKS)[scope])


async def sandbox_only(request: Request) -> None:
    """Sandbox routes do not exist outside sandbox mode."""
    if not _runtime(request).settings.sandbox:
        raise NotFound("Not Found")
