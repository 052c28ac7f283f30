"""Operations endpoints, the OpenAPI document, and the two error bodies."""

from __future__ import annotations

import asyncio
import gc
import re

import httpx
import pytest

from pixgate.accounts.queries import accounts as account_rows
from pixgate.app import app_from_environment
from pixgate.runtime import Runtime
from tests.helpers import assert_general_error, bearer, make_account, statements_waiting


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_readyz_checks_the_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready"}


async def test_metrics_count_requests_per_route(client: httpx.AsyncClient) -> None:
    await client.get("/healthz")
    text = (await client.get("/metrics")).text
    assert 'pixgate_requests_total{method="GET",route="/healthz",status="200"}' in text
    assert "pixgate_request_duration_seconds_bucket" in text


async def test_request_id_is_echoed(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz", headers={"X-Request-Id": "abc-123"})
    assert response.headers["x-request-id"] == "abc-123"


async def test_request_id_is_made_in_nginx_form_when_none_is_sent(
    client: httpx.AsyncClient,
) -> None:
    ids = [(await client.get("/healthz")).headers["x-request-id"] for _ in range(3)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", rid) for rid in ids), ids
    assert len(set(ids)) == 3
    error = await client.get("/nope")
    assert error.json()["errorId"] == error.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", error.headers["x-request-id"])


async def test_openapi_documents_routes_and_errors(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    token = spec["paths"]["/api/auth/token"]["post"]
    assert {"400", "401", "403"} <= set(token["responses"])
    assert "PUB_CERT_NOT_AUTHORIZED_FOR_ACCOUNT" in token["responses"]["403"]["description"]
    assert "/accounts/balances" in spec["paths"]
    assert "/oauth/token" in spec["paths"]


async def test_docs_page_needs_no_cdn(client: httpx.AsyncClient) -> None:
    page = (await client.get("/docs")).text
    assert "/_static/swagger/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower()
    asset = await client.get("/_static/swagger/swagger-ui-bundle.js")
    assert asset.status_code == 200
    assert len(asset.content) > 100_000


async def test_unknown_route_has_the_general_envelope(client: httpx.AsyncClient) -> None:
    body = assert_general_error(await client.get("/nope"), 404, "NOT_FOUND")
    assert body["message"] == "Not Found"
    assert_general_error(await client.delete("/healthz"), 405, "METHOD_NOT_ALLOWED")


async def test_wrong_content_type_is_415(rt: Runtime, client: httpx.AsyncClient) -> None:
    account = await make_account(rt)
    headers = {**await bearer(client, account), "Content-Type": "text/plain"}
    response = await client.post("/accounts/balances", content="hello", headers=headers)
    assert response.status_code in (405, 415)


async def test_balances_both_shapes_from_one_ledger(rt: Runtime, client: httpx.AsyncClient) -> None:
    account = await make_account(rt, balance="1000.00")
    headers = await bearer(client, account)
    cb = (await client.get("/accounts/balances", headers=headers)).json()
    item = cb["data"][0]
    assert item["balanceAmount"] == {"available": 1000.0, "blocked": 0.0, "overdraft": 0}
    assert item["eventDate"].endswith("Z")
    standard = (await client.get("/api/balance", headers=headers)).json()
    assert standard["grossBalance"] == 1000.0
    assert standard["netBalance"] == 1000.0
    assert standard["blockedBalance"] == 0.0
    assert standard["consultedAt"].endswith("Z")


async def test_balance_reads_batched_together_each_see_their_own_account(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    """Concurrent balance reads go in one query (core.db.batches); each answer is the caller's."""
    accounts = [await make_account(rt, balance=f"{n}.00") for n in (10, 20, 30)]
    headers = [await bearer(client, account) for account in accounts]
    async with rt.db.queued("accounts"):
        reads = [
            asyncio.create_task(client.get("/accounts/balances", headers=h)) for h in headers * 2
        ]
        await statements_waiting(rt.db.batcher(account_rows.BALANCES), "accounts", len(reads))
    answers = [(await read).json()["data"][0]["balanceAmount"]["available"] for read in reads]
    assert answers == [10.0, 20.0, 30.0] * 2


async def test_balances_require_a_token(client: httpx.AsyncClient) -> None:
    for path in ("/accounts/balances", "/api/balance"):
        response = await client.get(path)
        assert response.status_code == 401
        assert set(response.json()) == {"statusCode", "message", "error"}


def test_served_processes_collect_garbage_less_often(monkeypatch: pytest.MonkeyPatch) -> None:
    """`pixgate serve` builds its app with app_from_environment: start-up objects frozen, the
    young generation collected every 20,000 allocations (docs/performance.md, "Garbage
    collector tuning")."""
    monkeypatch.setenv("PIXGATE_DATABASE_URL", "postgresql://unused@127.0.0.1:1/unused")
    before = gc.get_threshold()
    try:
        app_from_environment()
        assert gc.get_threshold() == (20_000, 20, 100)
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
