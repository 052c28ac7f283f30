"""`DirectCall`: an operation whose only inputs are the request and a JSON body, called without
FastAPI's general parameter pass.

FastAPI resolves every route's inputs with one general pass per request (`solve_dependencies`
and what surrounds it: a response for dependencies to write to, exit stacks, the content type
parsed as a MIME header, each dependency's own parameter pass). For a cash-out that pass cost
about a quarter of the application's CPU (docs/performance.md, "Operations called
directly"). The hottest operations need none of its generality: their dependencies take only
the request (the caller's authentication), their one body is a model, and they answer a
`Response` they built. For such a route, `DirectCall` validates the body with the field
FastAPI built for it, runs the dependencies in FastAPI's order and calls the endpoint.

What it does not take as given goes to FastAPI's own handler, which answers it as it always
did: a body that is not an `application/json` document already parsed (by the screen, into
`ExactJsonRequest`), a body the model refuses, an app with dependency overrides. Its
refusals come before any dependency runs, so a request handed on has done nothing. A
dependency's own refusal (401, 403, a sandbox header outside the sandbox) propagates from
here as it does from FastAPI's pass. `tests/core/http/intake/test_direct.py` holds the two paths to
the same answers.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request, Response, params
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from pixgate.core.http.intake.screen import media_type

if TYPE_CHECKING:
    from fastapi._compat import ModelField

JSON_MEDIA = "application/json"
"""The one media type called directly: FastAPI reads a body of it as JSON whatever its
parameters; any other goes to FastAPI's handler."""


@dataclass(frozen=True, slots=True)
class Dependency:
    """A dependency that takes the request alone, as the parameter `takes`; its value goes to
    the endpoint's parameter `name` (None: a route's dependency, its value unused)."""

    name: str | None
    call: Callable[..., Awaitable[Any]]
    takes: str


@dataclass(frozen=True, slots=True)
class DirectCall:
    route: APIRoute
    endpoint: Callable[..., Awaitable[Response]]
    dependencies: tuple[Dependency, ...]
    body: ModelField | None

    @classmethod
    def of(cls, route: APIRoute) -> DirectCall | None:
        """The direct call of `route`, or None when FastAPI's pass must resolve its inputs."""
        dependant = route.dependant
        endpoint = dependant.call
        if (
            endpoint is None
            or not inspect.iscoroutinefunction(endpoint)
            or not _answers_itself(endpoint)
            or _has_inputs(dependant)
            or dependant.request_param_name is not None
            or len(dependant.body_params) > 1
        ):
            return None
        body = dependant.body_params[0] if dependant.body_params else None
        if body is not None and not _plain_json(body):
            return None
        dependencies = []
        for sub in dependant.dependencies:
            call, takes = sub.call, sub.request_param_name
            if call is None or takes is None or not _takes_request_only(sub):
                return None
            if not _is_coroutine(call):
                return None
            dependencies.append(Dependency(sub.name, call, takes))
        if len({id(d.call) for d in dependencies}) != len(dependencies):
            return None  # FastAPI calls a repeated dependency once per request
        return cls(route, endpoint, tuple(dependencies), body)

    def inputs(self, request: Request, parsed: Any) -> dict[str, Any] | None:
        """The endpoint's body argument, validated; None when FastAPI's handler must answer
        instead (nothing has run yet). `parsed`: the JSON body the screen read, if it read
        one."""
        if getattr(self.route.dependency_overrides_provider, "dependency_overrides", None):
            return None
        if self.body is None:
            return {}
        if parsed is None or media_type(request) != JSON_MEDIA:
            return None
        value, errors = self.body.validate(parsed, {}, loc=("body",))
        return None if errors else {self.body.name: value}

    async def call(self, request: Request, inputs: dict[str, Any]) -> Response:
        """The dependencies, then the endpoint with what they and `inputs` give. Once the
        endpoint has run, its answer is the request's: it is never handed on."""
        values = dict(inputs)
        for dependency in self.dependencies:
            value = await dependency.call(**{dependency.takes: request})
            if dependency.name is not None:
                values[dependency.name] = value
        answer = await self.endpoint(**values)
        if not isinstance(answer, Response):
            raise TypeError(f"{self.route.path} is declared to answer a Response: {answer!r}")
        return answer


def _has_inputs(dependant: Dependant) -> bool:
    """Whether the route takes anything but the request, dependencies and a body."""
    return bool(
        dependant.path_params
        or dependant.query_params
        or dependant.header_params
        or dependant.cookie_params
        or dependant.websocket_param_name
        or dependant.http_connection_param_name
        or dependant.response_param_name
        or dependant.background_tasks_param_name
        or dependant.security_scopes_param_name
    )


def _takes_request_only(sub: Dependant) -> bool:
    return not sub.dependencies and not sub.body_params and not _has_inputs(sub)


def _is_coroutine(call: Callable[..., Any]) -> bool:
    """An `async def` function, or an instance whose `__call__` is one; not a generator (a
    dependency with `yield` needs FastAPI's exit stack)."""
    function = call if inspect.isfunction(call) else type(call).__call__
    return inspect.iscoroutinefunction(function)


def _answers_itself(endpoint: Callable[..., Any]) -> bool:
    """Whether the endpoint is declared to return a `Response`: FastAPI serialises anything
    else through the route's response model, which this call does not do."""
    try:
        returns = inspect.signature(endpoint, eval_str=True).return_annotation
    except NameError:  # a name its module imports only for the type checker
        return False
    return inspect.isclass(returns) and issubclass(returns, Response)


def _plain_json(body: ModelField) -> bool:
    """A body FastAPI reads whole as one JSON document (not a form, not embedded under its
    parameter's name), validated by the parameter's own field."""
    info = body.field_info
    return isinstance(info, params.Body) and info.media_type == JSON_MEDIA and not info.embed
