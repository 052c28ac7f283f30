"""Every route is registered on the application's own router (`include_flat`), with what
`include_router` would have given it."""

from __future__ import annotations

import inspect

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import Mount, Route

from pixgate.accounts.routes.deps import ScenarioScopeCheck, ScopeCheck, get_runtime, sandbox_only
from pixgate.core.http.routing import dependency_calls
from pixgate.routers import API_PIX_ROUTERS, ROUTERS


def test_no_included_router_is_left_to_walk(app: FastAPI) -> None:
    """An included router stays a node that every request walks (FastAPI >= 0.137)."""
    assert [r for r in app.router.routes if not isinstance(r, APIRoute | Mount | Route)] == []


def test_every_route_of_every_router_is_on_the_app_once(app: FastAPI) -> None:
    base = app.state.api_pix_base_path
    declared = [
        (prefix + route.path, frozenset(route.methods or ()), type(route))
        for routers, prefix in ((ROUTERS, ""), (API_PIX_ROUTERS, base))
        for router in routers
        for route in router.routes
        if isinstance(route, APIRoute)
    ]
    served = [
        (route.path, frozenset(route.methods or ()), type(route))
        for route in app.router.routes
        if isinstance(route, APIRoute)
    ]
    assert len(declared) > 70
    assert served == declared


def test_the_routers_dependency_runs_first(app: FastAPI) -> None:
    """`sandbox_only` (the sandbox router's) before the route's own; the screen is no
    dependency, it runs in the route class before any."""
    sandbox = next(
        r for r in app.router.routes if isinstance(r, APIRoute) and r.path == "/sandbox/dict/keys"
    )
    calls = [d.call for d in sandbox.dependant.dependencies]
    assert calls[0] is sandbox_only


async def test_a_route_at_the_end_of_the_list_answers(client: httpx.AsyncClient) -> None:
    """The API Pix is registered last, under its base path; the gateway's own routes too."""
    assert (await client.get("/api/v2/cob/" + "a" * 26)).status_code == 403
    assert (await client.get("/healthz")).json() == {"status": "ok"}


def test_every_dependency_is_a_coroutine(app: FastAPI) -> None:
    """FastAPI runs a plain `def` dependency in a thread pool: a hand-off on every request."""
    calls = {
        call
        for route in app.router.routes
        if isinstance(route, APIRoute)
        for call in dependency_calls(route.dependant)
    }
    assert len(calls) > 10
    plain = [
        call
        for call in calls
        if not inspect.iscoroutinefunction(call)
        and not inspect.iscoroutinefunction(getattr(call, "__call__", None))
    ]
    assert plain == []


def test_authentication_is_one_dependency_deep(app: FastAPI) -> None:
    """Each level costs FastAPI a resolution pass on every request: the scope check
    authenticates the caller itself, and depends on nothing."""
    checks = [
        sub
        for route in app.router.routes
        if isinstance(route, APIRoute)
        for sub in route.dependant.dependencies
        if isinstance(sub.call, ScopeCheck)
    ]
    assert len(checks) > 30
    assert [check.call for check in checks if check.dependencies] == []


def test_an_authenticated_operation_takes_its_runtime_from_the_caller(app: FastAPI) -> None:
    """The runtime and the sandbox instructions come with the caller (`deps.Caller`), not as
    dependencies of their own: a cash-out resolves one dependency, not three."""
    authenticated = [
        route
        for route in app.router.routes
        if isinstance(route, APIRoute)
        and any(isinstance(d.call, ScopeCheck) for d in route.dependant.dependencies)
    ]
    assert len(authenticated) > 30
    assert [r.path for r in authenticated if get_runtime in dependency_calls(r.dependant)] == []
    cash_out = next(r for r in authenticated if r.path == "/api/pix/cash-out")
    assert [type(d.call) for d in cash_out.dependant.dependencies] == [ScenarioScopeCheck]
