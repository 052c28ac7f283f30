"""HEAD answered by every GET route, as HTTP requires of a server (RFC 9110, section 9.1).

FastAPI declares one route per method and never HEAD: `HEAD /healthz` was a 405, which a
load balancer's or a monitor's HEAD probe reads as the service being down. Declaring HEAD
on every route would add a `head` operation to the OpenAPI document for each GET. Instead
the request is routed as the GET it mirrors, and answered with the GET's status and
headers (its `Content-Length` included, RFC 9110 section 9.3.2) and no body.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class AnswerHead:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        # The scope itself, not a copy: the route the app selects is recorded in it, for the
        # access log and the metrics outside. The server reads the method again when the
        # answer starts (uvicorn leaves out the body of a HEAD), so HEAD is back by then.
        scope["method"] = "GET"

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.start":
                scope["method"] = "HEAD"
            elif message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        try:
            await self.app(scope, receive, without_body)
        finally:
            scope["method"] = "HEAD"
