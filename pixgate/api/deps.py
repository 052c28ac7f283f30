"""Dependencies every router shares: the runtime, the calling account, JSON bodies.

All are `async def`: FastAPI runs plain `def` dependencies in a thread pool, a measurable
cost on every request (docs/performance.md).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from pixgate.domain import scenarios
from pixgate.domain.errors import NotFound, UnsupportedMediaType, ValidationFailed
from pixgate.runtime import Runtime
from pixgate.services import auth


async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def current_principal(request: Request, rt: RuntimeDep) -> auth.Principal:
    return auth.authenticate(
        rt, request.headers.get("authorization"), request.headers.get("x-ssl-client-cert")
    )


CurrentAccount = Annotated[auth.Principal, Depends(current_principal)]


async def sandbox_scenario(
    rt: RuntimeDep, x_sandbox_scenario: Annotated[str | None, Header()] = None
) -> str | None:
    """The canonical `X-Sandbox-Scenario` (D22); refused outside sandbox mode."""
    if x_sandbox_scenario is not None and not rt.settings.sandbox:
        raise ValidationFailed(["X-Sandbox-Scenario is only accepted in sandbox mode"])
    return scenarios.parse(x_sandbox_scenario)


SandboxScenario = Annotated[str | None, Depends(sandbox_scenario)]


async def sandbox_only(rt: RuntimeDep) -> None:
    """Sandbox routes (D24) do not exist outside sandbox mode."""
    if not rt.settings.sandbox:
        raise NotFound("Not Found")


async def require_json(request: Request) -> None:
    """A body in another format is a clear 415, not a confusing field error."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return
    if getattr(request.scope.get("route"), "accepts_form", False):
        return
    content_type = request.headers.get("content-type", "")
    has_body = request.headers.get("content-length", "0") != "0" or "transfer-encoding" in (
        request.headers
    )
    media = content_type.split(";", 1)[0].strip().lower()
    if has_body and media and media != "application/json" and not media.endswith("+json"):
        raise UnsupportedMediaType(f"Content-Type {media} is not supported; use application/json")
