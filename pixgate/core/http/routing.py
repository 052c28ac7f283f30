"""`PixgateRoute`: the route class of every operation, so every JSON body is read one way.

FastAPI parses a JSON body with `Request.json()` before any dependency runs; a route class is
the documented place to change how ("Custom Request and APIRoute class"). Every router names
this class or one of its subclasses (the error families in `pixgate.core.http.errors`);
`tests/app/test_json_bodies.py` checks that no route of the app is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from pixgate.core.http import json_body


class ExactJsonRequest(Request):
    """A request whose JSON body reads numbers exactly (`json_body.loads`)."""

    @property
    def has_json(self) -> bool:
        """Whether the body was parsed as JSON (FastAPI parses only a JSON media type)."""
        return hasattr(self, "_json")

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = json_body.loads(await self.body())
        return self._json


class PixgateRoute(APIRoute):
    form_body_bytes: int | None = None
    """A route that reads a form body sets how large one may be: decoding a form costs
    about 75 bytes of memory per percent-escape, so a form is held far below the JSON limit
    (`PIXGATE_MAX_BODY_BYTES`), checked before it is parsed."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def exact(request: Request) -> Response:
            return await handler(ExactJsonRequest(request.scope, request.receive))

        return exact
