"""Every route is registered on the application's own router (`include_flat`), with what
`include_router` would have given it."""

from __future__ import annotations

import inspect
import re
from collections import Counter

import httpx
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.routing import Match, Mount, Route

from pixgate.accounts.routes.deps import ScenarioScopeCheck, ScopeCheck, get_runtime, sandbox_only
from pixgate.core.http.intake.routing import PixgateRoute, dependency_calls
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


def _paths_near(route: APIRoute) -> list[str]:
    """Paths at and around a route's: its own with every parameter filled, its literal
    prefix, one character shorter and longer, with a trailing slash."""
    filled = re.sub(r"\{[^}]*\}", "x", route.path_format)
    prefix = route.path_format.partition("{")[0]
    return [filled, filled + "/", filled + "x", prefix, prefix[:-1], prefix + "x", filled[:-1]]


def test_the_literal_prefix_refuses_only_what_the_route_would(app: FastAPI) -> None:
    """Every route of the app, against every path near any route's, under no root path and
    under one: the answer of `PixgateRoute.matches` is FastAPI's, child scope included."""
    routes = [r for r in app.router.routes if isinstance(r, APIRoute)]
    assert all(isinstance(r, PixgateRoute) and r.literal_prefix is not None for r in routes)
    paths = {path for route in routes for path in _paths_near(route)} | {"", "/", "/x"}
    compared = Counter[Match]()
    for root in ("", "/gateway"):
        for path in sorted(paths):
            for method in ("GET", "POST"):
                scope = {"type": "http", "path": root + path, "root_path": root, "method": method}
                for route in routes:
                    fast = route.matches(dict(scope))
                    assert fast == APIRoute.matches(route, dict(scope)), (route.path, scope)
                    compared[fast[0]] += 1
    assert compared[Match.FULL] > 100 and compared[Match.PARTIAL] > 50


async def test_a_pixgate_route_in_an_included_router_is_matched_under_its_prefix() -> None:
    """Only a route registered flat refuses by its own prefix: one left in an included router
    is matched under the router's, by FastAPI."""
    router = APIRouter(route_class=PixgateRoute)

    @router.get("/thing/{name}")
    async def thing(name: str) -> dict[str, str]:
        return {"name": name}

    app = FastAPI()
    app.include_router(router, prefix="/nested")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        answer = await client.get("/nested/thing/a")
    assert answer.status_code == 200
    assert answer.json() == {"name": "a"}
