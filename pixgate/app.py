"""`create_app`: the FastAPI application, its routers, error handlers and lifespan."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.resources import files

import structlog
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from pixgate import openapi
from pixgate.accounts.service import auth
from pixgate.core.http import errors
from pixgate.core.http.intake.head import AnswerHead
from pixgate.core.http.intake.routing import include_flat
from pixgate.core.http.middleware import RequestContext
from pixgate.core.http.responses import JSONResponse
from pixgate.core.settings import Settings
from pixgate.jobs.worker import Worker
from pixgate.routers import API_PIX_ROUTERS, ROUTERS
from pixgate.runtime import Runtime, build_runtime, resolve_database_url
from pixgate.webhooks.routes import register_openapi_webhooks
from pixgate.webhooks.service import reachability

log = structlog.get_logger(__name__)

DESCRIPTION = """\
pixgate takes PIX payments (charges with BR Code / QR), sends payments to PIX keys,
refunds, reports balances and transactions, and notifies results by webhook.

Authenticate with `POST /api/auth/token` (client certificate in `X-SSL-Client-Cert`
plus clientId/clientSecret), then send `Authorization: Bearer <token>`.
"""


def create_app(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    with_worker: bool = False,
) -> FastAPI:
    """Build the app; with `runtime` given (tests), the lifespan opens nothing itself."""
    settings = settings or (runtime.settings if runtime else Settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            rt = runtime
            if rt is None:
                url = resolve_database_url(settings)
                rt = await stack.enter_async_context(build_runtime(settings, url))
            app.state.runtime = rt
            await warn_undeliverable_webhooks(rt)
            revocations = asyncio.create_task(auth.watch_revocations(rt))
            worker_task = None
            if with_worker:
                worker = Worker(rt)
                worker_task = asyncio.create_task(worker.run())
            try:
                yield
            finally:
                revocations.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await revocations
                if worker_task is not None:
                    worker.stop()
                    await worker_task

    app = FastAPI(
        title="pixgate",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        default_response_class=JSONResponse,
        docs_url=None,
        redoc_url=None,
        # Per-request OpenTelemetry probing costs throughput; pixgate exports Prometheus.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    if runtime is not None:
        app.state.runtime = runtime
    # Before RequestContext: a middleware added later wraps the earlier ones, so the access
    # log and metrics see the 500 that errors.AnswerUnexpected gives an unexpected exception.
    errors.install(app)
    app.add_middleware(AnswerHead)
    app.add_middleware(RequestContext, max_body_bytes=settings.max_body_bytes)
    # Swagger UI 5 (it renders OpenAPI 3.1), from the fastapi-offline wheel: no CDN.
    app.mount(
        "/_static/swagger",
        StaticFiles(directory=str(files("fastapi_offline") / "static")),
        name="swagger",
    )
    # Before the routers: the dashboard's catch-all 404 page must not shadow its assets.
    app.mount(
        "/dashboard/static",
        StaticFiles(directory=str(files("pixgate.dashboard") / "static")),
        name="dashboard-static",
    )
    for router in ROUTERS:
        include_flat(app, router)
    app.state.api_pix_base_path = settings.api_pix_base_path
    for router in API_PIX_ROUTERS:
        include_flat(app, router, prefix=settings.api_pix_base_path)
    register_openapi_webhooks(app)
    openapi.install(app)
    return app


async def warn_undeliverable_webhooks(rt: Runtime) -> None:
    """Say at start which registered URLs this server's settings refuse: otherwise each of
    their deliveries fails, retried for days, and nothing says why. Ids only, never a URL
    (it may carry a credential in its path or query)."""
    refused = await reachability.undeliverable(rt)
    if refused:
        log.warning(
            "webhooks.undeliverable",
            endpoint_ids=[r.endpoint_id for r in refused],
            allow_insecure_webhooks=rt.settings.allow_insecure_webhooks,
            hint="their deliveries will fail under this server's settings; list them with "
            "`pixgate webhooks list`, or set PIXGATE_ALLOW_INSECURE_WEBHOOKS=true for local "
            "development",
        )


def app_from_environment() -> FastAPI:
    """uvicorn's factory for `pixgate serve`: settings from the environment the CLI prepared."""
    from pixgate.core.logging import configure
    from pixgate.gc_tuning import tune_for_serving

    settings = Settings()
    configure(json=settings.log_json, level=settings.log_level)
    app = create_app(settings, with_worker=settings.serve_with_worker)
    tune_for_serving()
    return app
