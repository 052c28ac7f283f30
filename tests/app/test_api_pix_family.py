"""The API Pix family's frame: its base path and its RFC 7807 answers to what matches no
operation."""

from __future__ import annotations

import httpx

from pixgate.app import create_app
from pixgate.runtime import Runtime


async def test_an_unknown_path_under_the_base_path_is_a_problem(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/api/v2/nothing-here")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "https://pix.bcb.gov.br/api/v2/error/NaoEncontrado"
    assert body["title"] == "Não Encontrado"
    assert body["status"] == 404
    assert body["detail"]


async def test_the_base_path_is_a_setting(rt: Runtime) -> None:
    settings = rt.settings.model_copy(update={"api_pix_base_path": "/bank/pix/v2"})
    transport = httpx.ASGITransport(app=create_app(settings, runtime=rt))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        moved = await client.get("/bank/pix/v2/nothing-here")
        default = await client.get("/api/v2/nothing-here")
    assert moved.headers["content-type"] == "application/problem+json"
    assert moved.json()["status"] == 404
    assert default.status_code == 404
    assert default.headers["content-type"] == "application/json"
    assert "statusCode" in default.json()
