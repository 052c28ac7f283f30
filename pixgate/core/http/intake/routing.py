"""`PixgateRoute`: the route class of every operation, so every request is screened and every
JSON body read one way.

FastAPI parses a JSON body with `Request.json()` before any dependency runs; a route class is
the documented place to change how ("Custom Request and APIRoute class"), and to refuse what
no route can use before that (`screen.Screen`). Every router names this class or one of its
subclasses (the error families in `pixgate.core.http.errors`); `tests/app/test_json_bodies.py`
checks that no route of the app is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette._utils import get_route_path
from starlette.routing import Match
from starlette.types import Scope

from pixgate.core.http.intake import json_body
from pixgate.core.http.intake.direct import DirectCall
from pixgate.core.http.intake.screen import Screen


class ExactJsonRequest(Request):
    """A request whose JSON body reads numbers exactly (`json_body.loads`)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = json_body.loads(await self.body())
        return self._json

    def json_read(self) -> Any:
        """The body as `json` parsed it, if it did (the screen reads every JSON body), else
        None: whether the body is JSON is not decided here."""
        return getattr(self, "_json", None)


class PixgateRoute(APIRoute):
    form_body_bytes: int | None = None
    """A route that reads a form body sets how large one may be: decoding a form costs
    about 75 bytes of memory per percent-escape, so a form is held far below the JSON limit
    (`PIXGATE_MAX_BODY_BYTES`), checked before it is parsed."""

    literal_prefix: str | None = None
    """Set by `include_flat` on a route it registers: the part of the route's path before its
    first parameter, which every path the route matches starts with."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        """A path that does not start with the route's literal prefix is refused at once.

        The application's router tries its routes in order, and FastAPI's `matches` costs a
        route context lookup and a regular expression each: an API Pix request, after some
        sixty routes, paid more for finding its route than for its own dependency. Only a
        route registered flat has the prefix: one reached through an included router is
        matched under that router's prefix, by FastAPI."""
        prefix = self.literal_prefix
        if (
            prefix is not None
            and scope["type"] == "http"
            and not get_route_path(scope).startswith(prefix)
        ):
            return Match.NONE, {}
        return super().matches(scope)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        screen = Screen.of(self.dependant, self.body_field, self.form_body_bytes)
        direct = DirectCall.of(self)

        async def exact(request: Request) -> Response:
            exact_request = ExactJsonRequest(request.scope, request.receive)
            await screen.check(exact_request)
            if direct is not None:
                inputs = direct.inputs(exact_request, exact_request.json_read())
                if inputs is not None:
                    return await direct.call(exact_request, inputs)
            return await handler(exact_request)

        return exact


def dependency_calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    """Every dependency a route runs, those of its dependencies included (the OpenAPI pass
    and the tests read a route's needs from them)."""
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from dependency_calls(sub)


def include_flat(app: FastAPI, router: APIRouter, prefix: str = "") -> None:
    """`app.include_router(router, prefix=prefix)`, with every route registered on the
    app's own router, as FastAPI did before 0.137.

    Since 0.137 an included router stays a node of its own that every request walks: each
    route before the one that answers is matched through a per-request route context, and
    the router that holds it is matched twice. With about thirty routers, a route near the
    end of the list (`/healthz`, the API Pix) paid more for finding its route than for the
    rest of its dispatch (docs/performance.md, "Routes registered flat"). Registered here, a
    route is matched like a Starlette route: one regular expression.

    Each route keeps what its own router gave it (tags, responses, dependencies, route
    class); the app's router adds its dependencies first and its default response class,
    as `include_router` would. A `PixgateRoute` registered here also refuses, before any
    regular expression, a path outside its literal prefix (`PixgateRoute.matches`).
    """
    for route in router.routes:
        if not isinstance(route, APIRoute):
            raise TypeError(f"{route!r} of {router!r} is not an APIRoute")
        app.router.add_api_route(
            prefix + route.path,
            route.endpoint,
            response_model=route.response_model,
            status_code=route.status_code,
            tags=route.tags,
            dependencies=route.dependencies,
            summary=route.summary,
            description=route.description,
            response_description=route.response_description,
            responses=route.responses,
            deprecated=route.deprecated,
            methods=route.methods,
            operation_id=route.operation_id,
            response_model_include=route.response_model_include,
            response_model_exclude=route.response_model_exclude,
            response_model_by_alias=route.response_model_by_alias,
            response_model_exclude_unset=route.response_model_exclude_unset,
            response_model_exclude_defaults=route.response_model_exclude_defaults,
            response_model_exclude_none=route.response_model_exclude_none,
            include_in_schema=route.include_in_schema,
            response_class=route.response_class,
            name=route.name,
            route_class_override=type(route),
            callbacks=route.callbacks,
            openapi_extra=route.openapi_extra,
            generate_unique_id_function=route.generate_unique_id_function,
            strict_content_type=route.strict_content_type,
            max_body_size=route.max_body_size,
            form_limits=route.form_limits,
        )
        added = app.router.routes[-1]
        if isinstance(added, PixgateRoute):
            added.literal_prefix = added.path_format.partition("{")[0]
