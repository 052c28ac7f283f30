"""Dependencies every router shares: the runtime, the calling account, sandbox instructions.

All are `async def`: FastAPI runs plain `def` dependencies in a thread pool, a thread
hand-off per dependency on every request (docs/performance.md, "Asynchronous dependencies,
no telemetry probe").
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request
from pydantic import WithJsonSchema

from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.service import auth
from pixgate.core.errors import Forbidden, NotFound, ValidationFailed
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
