"""The `Allow` header of a 405: every method the path answers, whichever route declares it
(HEAD wherever GET is, `pixgate.core.http.intake.head`).

Starlette builds `Allow` from the one route that matched the path but not the method, and
FastAPI declares one route per method: `OPTIONS /cob/x` listed only PUT, though the path
also answers GET and PATCH. The error handler asks here instead, for every 405 of the app.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import Request
from fastapi.routing import RouteContext, iter_route_contexts
from starlette.convertors import PathConvertor
from starlette.routing import Match


@dataclass(slots=True)
class _PathMethods:
    declared: set[str] = field(default_factory=set)
    """Of the routes whose template names this path."""
    catch_all: set[str] = field(default_factory=set)
    """Of the routes whose template ends in `{name:path}` (the dashboard's 404 page): they
    take the addresses no other route declares."""
    mounted: bool = False
    """A mounted application (the static files) answers the path, and knows its methods."""


def allowed_methods(request: Request, answered: str | None) -> str:
    """The `Allow` of a 405: the methods of every route matching the request's path; those
    of a catch-all route only when no other route matches; a mounted application's own
    (`answered`)."""
    found = _path_methods(request)
    if found.mounted:
        return answered or ""
    return ", ".join(sorted(found.declared or found.catch_all))


def declared_methods(request: Request) -> str:
    """The methods that routes other than the catch-all ones declare for the path ("" when
    none): a catch-all route answers 405 with these rather than hide the path's routes."""
    return ", ".join(sorted(_path_methods(request).declared))


def _path_methods(request: Request) -> _PathMethods:
    # A mounted application's exception comes with the mount's scope, whose root_path grew
    # by the mount's path: matched from the application's root again.
    scope = dict(request.scope)
    scope["root_path"] = scope.get("app_root_path", scope.get("root_path", ""))
    found = _PathMethods()
    for route in iter_route_contexts(request.app.routes):
        match, _ = route.matches(scope)
        if match is Match.NONE:
            continue
        if not route.methods:
            found.mounted = True
        elif _catches_all(route):
            found.catch_all.update(_answered(route.methods))
        else:
            found.declared.update(_answered(route.methods))
    return found


def _answered(methods: set[str]) -> set[str]:
    """A route's methods, HEAD with GET (`pixgate.core.http.intake.head`)."""
    return methods | {"HEAD"} if "GET" in methods else methods


def _catches_all(route: RouteContext) -> bool:
    convertors = route.param_convertors or {}
    return any(isinstance(convertor, PathConvertor) for convertor in convertors.values())
