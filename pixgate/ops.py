"""Operations: liveness, readiness, metrics, the token-verification keys, offline API docs."""

from __future__ import annotations

import asyncio
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import Field

from pixgate.accounts.routes.deps import RuntimeDep
from pixgate.core.errors import DatabaseUnavailable
from pixgate.core.http.key_schemas import JsonWebKeySet
from pixgate.core.http.responses import JSONResponse
from pixgate.core.http.routing import PixgateRoute
from pixgate.core.http.schemas import ApiModel

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
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


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
