"""Operations: liveness, readiness, metrics, the token-verification keys, offline API docs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from pydantic import Field

from pixgate.accounts.routes.deps import RuntimeDep
from pixgate.core.errors import DatabaseUnavailable
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.key_schemas import JsonWebKeySet
from pixgate.core.http.responses import JSONResponse
from pixgate.core.http.schemas import ApiModel
from pixgate.core.metrics import Families, PoolUsage, Scrape
from pixgate.jobs import queue as job_rows
from pixgate.jobs.registry import HANDLERS
from pixgate.runtime import Runtime

router = APIRouter(route_class=PixgateRoute, tags=["operations"])


@router.get("/healthz", summary="Liveness")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


class Readiness(ApiModel):
    status: Literal["ready", "unavailable"]
    reason: str | None = Field(default=None, description="the error met reaching the database")


@router.get(
    "/readyz",
    summary="Readiness: the database answers",
    response_model=Readiness,
    responses={
        503: {
            "model": Readiness,
            "description": "The database does not answer (within PIXGATE_DB_CONNECT_TIMEOUT_S).",
            "headers": {
                "Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}
            },
        }
    },
)
async def readyz(rt: RuntimeDep) -> JSONResponse:
    """Bounded: a database that does not answer within the connect timeout (a pool with no
    free connection included) is `unavailable`, so probes never pile up."""
    try:
        async with asyncio.timeout(rt.settings.db_connect_timeout_s):
            async with rt.db.connection() as conn:
                await conn.fetchval("SELECT 1")
    except Exception as exc:  # any failure to reach the database means not ready
        cause = exc.__cause__ if isinstance(exc, DatabaseUnavailable) and exc.__cause__ else exc
        return JSONResponse(
            {"status": "unavailable", "reason": type(cause).__name__},
            503,
            headers={"Retry-After": str(DatabaseUnavailable.retry_after)},
        )
    return JSONResponse({"status": "ready"})


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
async def metrics(request: Request) -> Response:
    """This process's counters and histograms, its connection pool, and the job queue read
    from the database when asked (the same from every process). Without the database it
    still answers 200, with `pixgate_database_up 0` and no queue (docs/operations.md)."""
    # from the app, not RuntimeDep: that dependency declares a 503, which this never answers
    rt: Runtime = request.app.state.runtime
    try:
        async with asyncio.timeout(rt.settings.db_connect_timeout_s):
            async with rt.db.connection() as conn:
                waiting = await job_rows.backlog(conn)
    except Exception:  # any failure to read the queue is the database being out of reach
        waiting = None
    read_now = Families(_queue_families(waiting))
    return Response(
        generate_latest(Scrape(PoolUsage(rt.db), read_now)), media_type=CONTENT_TYPE_LATEST
    )


def _queue_families(waiting: list[job_rows.Backlog] | None) -> Iterator[Metric]:
    """The database's answer as gauges, a series for every job kind (0 when none waits), so
    an alert sees a kind's backlog appear rather than a series come into being."""
    yield GaugeMetricFamily(
        "pixgate_database_up",
        "1 when this process's scrape read the database, 0 when it could not",
        value=0 if waiting is None else 1,
    )
    if waiting is None:
        return
    due = GaugeMetricFamily(
        "pixgate_jobs_due", "Queued jobs whose due time has come", labels=["kind"]
    )
    oldest = GaugeMetricFamily(
        "pixgate_jobs_oldest_due_seconds",
        "How long the longest-waiting due job has waited past its due time",
        labels=["kind"],
    )
    running = GaugeMetricFamily("pixgate_jobs_running", "Jobs a worker holds", labels=["kind"])
    by_kind = {row.kind: row for row in waiting}
    for kind in sorted(set(HANDLERS) | set(by_kind)):
        row = by_kind.get(kind, job_rows.Backlog(kind, 0, 0.0, 0))
        due.add_metric([kind], row.due)
        oldest.add_metric([kind], row.oldest_due_seconds)
        running.add_metric([kind], row.running)
    yield from (due, oldest, running)


@router.get("/.well-known/jwks.json", summary="Keys that verify access tokens")
async def jwks(rt: RuntimeDep) -> JsonWebKeySet:
    return JsonWebKeySet.of(rt.signer.jwks())


@router.get("/docs", include_in_schema=False)
async def docs(request: Request) -> HTMLResponse:
    """Swagger UI from the bundled assets: no CDN, so it works on a closed network."""
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="pixgate API",
        swagger_js_url="/_static/swagger/swagger-ui-bundle.js",
        swagger_css_url="/_static/swagger/swagger-ui.css",
        swagger_favicon_url="/_static/swagger/favicon.png",
    )
