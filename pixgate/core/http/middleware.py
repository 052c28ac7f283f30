"""Request id, structured access log and Prometheus metrics, as one pure ASGI middleware."""

from __future__ import annotations

import os
import time

import structlog
from prometheus_client import Counter, Histogram
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pixgate.core.metrics import labelled

log = structlog.get_logger("pixgate.access")

# A request at least this slow is logged at INFO even when it succeeded.
SLOW_REQUEST_SECONDS = 1.0

# Labelled by the route's template (`/api/pix/transactions/{id}`), never the raw path, so a
# series exists per route and not per transaction id or scanned URL (docs/operations.md).
REQUESTS = Counter("pixgate_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram(
    "pixgate_request_duration_seconds",
    "HTTP request latency, by route template and status class (2xx ... 5xx)",
    ["method", "route", "status_class"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


class BodyTooLarge(HTTPException):
    """Raised from `receive`, so the route's own error family renders it."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body is larger than {limit} bytes")


class RequestContext:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        rid = headers.get(b"x-request-id", b"").decode("latin-1")[:64] or new_request_id()
        scope.setdefault("state", {})["request_id"] = rid
        # reset (not cleared) at the end: clearing walks every context variable of the
        # process, a few per cent of a trivial request
        bound = structlog.contextvars.bind_contextvars(request_id=rid)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", []).append((b"x-request-id", rid.encode()))
            await send(message)

        try:
            await self.app(scope, self._limited(receive, headers), send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            route = route_template(scope)
            labelled(REQUESTS, scope["method"], route, str(status)).inc()
            labelled(LATENCY, scope["method"], route, f"{status // 100}xx").observe(elapsed)
            # Every request is counted in the metrics above; the log line, a JSON render and
            # a write(2) each, cost a fifth of a trivial route's throughput, so only failures
            # and slow requests are logged at INFO, the rest at DEBUG (docs/performance.md,
            # "A quiet access log").
            emit = log.info if status >= 400 or elapsed >= SLOW_REQUEST_SECONDS else log.debug
            emit(
                "http.request",
                method=scope["method"],
                path=scope["path"],
                status=status,
                duration_ms=round(elapsed * 1000, 2),
            )
            structlog.contextvars.reset_contextvars(**bound)

    def _limited(self, receive: Receive, headers: dict[bytes, bytes]) -> Receive:
        limit = self.max_body_bytes
        declared = headers.get(b"content-length", b"0")
        received = 0

        async def limited() -> Message:
            nonlocal received
            if declared.isdigit() and int(declared) > limit:
                raise BodyTooLarge(limit)
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge(limit)
            return message

        return limited


def new_request_id() -> str:
    """32 hex digits from 16 random bytes: the form of nginx's `$request_id`, so an id reads
    the same whether the proxy or the gateway made it. A `uuid4()` string took five times as
    long (3.3 against 0.6 us), on every request that came without one."""
    return os.urandom(16).hex()


def route_template(scope: Scope) -> str:
    """The path template of what answered: the route's (`/api/pix/transactions/{id}`), a
    mount's (`/dashboard/static/{path}`: static files), or `unmatched` (a 404 of no route)."""
    route = scope.get("route")
    if route is not None:
        return str(route.path)
    if scope.get("endpoint") is not None:
        return f"{scope.get('root_path', '')}/{{path}}"
    return "unmatched"
