"""/metrics through HTTP: requests by route template and status class, settlements, webhook
attempts and deliveries, jobs, the queue and the pool read at scrape time; and the metrics a
separate `pixgate worker --metrics-port` serves.

Counters and histograms belong to the process, so each test compares two scrapes; the queue
and the pool are read when asked, so their values are checked as they are."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from pixgate.core.db.pool import Database
from pixgate.jobs import queue as job_rows
from pixgate.jobs.queue import EXPIRE_CHARGE, SETTLE_PAYOUT, ExpireCharge
from pixgate.runtime import Runtime
from tests.app.scrapes import (
    Samples,
    allow_loopback_webhooks,
    cash_out,
    hooked_account,
    moved,
    samples,
    scrape,
    value,
)
from tests.helpers import bearer, make_account
from tests.processes import PIXGATE, free_port, running, server_env
from tests.support import drain
from tests.webhooks.conftest import make_due
from tests.webhooks.receiver import Receiver


@pytest.fixture
async def hooks_on(rt: Runtime) -> Runtime:
    await allow_loopback_webhooks(rt)
    return rt


async def test_requests_by_route_template_and_status_class(client: httpx.AsyncClient) -> None:
    before = await scrape(client)
    assert (await client.get("/healthz")).status_code == 200
    assert (await client.get("/qr/v2/not-a-token-123")).status_code == 404
    assert (await client.get("/no/such/path")).status_code == 404
    assert (await client.get("/dashboard/static/dashboard.css")).status_code == 200
    after = await scrape(client)

    count = "pixgate_request_duration_seconds_count"
    assert moved(before, after, count, method="GET", route="/healthz", status_class="2xx") == 1
    assert moved(before, after, count, method="GET", route="/qr/v2/{token}", status_class="4xx")
    assert moved(before, after, count, method="GET", route="unmatched", status_class="4xx") == 1
    static = {"method": "GET", "route": "/dashboard/static/{path}", "status_class": "2xx"}
    assert moved(before, after, count, **static) == 1
    requests = "pixgate_requests_total"
    assert moved(before, after, requests, method="GET", route="/qr/v2/{token}", status="404") == 1
    routes = {dict(labels).get("route", "") for _, labels in after}
    assert not [route for route in routes if "not-a-token" in route or "no/such" in route]


async def test_an_api_pix_request_is_counted_under_its_base_path(
    client: httpx.AsyncClient,
) -> None:
    """The API Pix's `/cob/{txid}` and the gateway's own are two routes, two series."""
    before = await scrape(client)
    assert (await client.get("/api/v2/cob/" + "a" * 26)).status_code == 403
    assert (await client.get("/cob/" + "a" * 26)).status_code == 401
    after = await scrape(client)

    requests = "pixgate_requests_total"
    api_pix = {"method": "GET", "route": "/api/v2/cob/{txid}"}
    own = {"method": "GET", "route": "/cob/{txid}"}
    assert moved(before, after, requests, **api_pix, status="403") == 1
    assert moved(before, after, requests, **own, status="401") == 1
    assert moved(before, after, requests, **own, status="403") == 0


async def test_a_cash_out_its_settlement_and_its_webhook(
    hooks_on: Runtime, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    headers = await hooked_account(client, hooks_on, receiver)
    before = await scrape(client)
    await cash_out(client, headers)
    assert await drain(hooks_on) == 2  # the settlement, then its webhook
    after = await scrape(client)

    assert len(receiver.at("/hook")) == 1
    requests = {"method": "POST", "route": "/api/pix/cash-out", "status": "201"}
    assert moved(before, after, "pixgate_requests_total", **requests) == 1
    settled = {"kind": "cash_out", "outcome": "confirmed"}
    assert moved(before, after, "pixgate_settlements_total", **settled) == 1
    bank = "pixgate_settlement_bank_duration_seconds_count"
    assert moved(before, after, bank, kind="cash_out") == 1
    delivered = {"trigger": "delivery", "outcome": "delivered"}
    assert moved(before, after, "pixgate_webhook_attempts_total", **delivered) == 1
    posts = "pixgate_webhook_attempt_duration_seconds_count"
    assert moved(before, after, posts, outcome="delivered") == 1
    assert moved(before, after, "pixgate_webhook_deliveries_total", outcome="delivered") == 1
    assert moved(before, after, "pixgate_webhook_delivery_seconds_count") == 1
    for kind in (SETTLE_PAYOUT.name, "webhook.deliver"):
        assert moved(before, after, "pixgate_jobs_run_total", kind=kind, outcome="done") == 1
        assert moved(before, after, "pixgate_job_duration_seconds_count", kind=kind) == 1


async def test_a_settlement_the_bank_refuses_is_an_error(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account_headers = await _account(rt, client)
    before = await scrape(client)
    await cash_out(client, account_headers, scenario="ORDER_REJECTED")
    await drain(rt)
    after = await scrape(client)
    total = "pixgate_settlements_total"
    assert moved(before, after, total, kind="cash_out", outcome="error") == 1
    assert moved(before, after, total, kind="cash_out", outcome="confirmed") == 0


async def test_attempts_that_fail_are_counted_by_how_and_retried(
    hooks_on: Runtime, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    headers = await hooked_account(client, hooks_on, receiver)
    nobody = {"url": f"http://127.0.0.1:{free_port()}/hook", "eventType": "cash_out"}
    assert (await client.post("/api/webhooks", json=nobody, headers=headers)).status_code == 200
    receiver.plan("/hook", 500)
    await cash_out(client, headers)
    await drain(hooks_on, kinds=[SETTLE_PAYOUT.name])
    before = await scrape(client)
    await drain(hooks_on)
    failed = await scrape(client)

    attempts = "pixgate_webhook_attempts_total"
    assert moved(before, failed, attempts, trigger="delivery", outcome="http_error") == 1
    assert moved(before, failed, attempts, trigger="delivery", outcome="unreachable") == 1
    runs = {"kind": "webhook.deliver", "outcome": "retry"}
    assert moved(before, failed, "pixgate_jobs_run_total", **runs) == 2
    assert moved(before, failed, "pixgate_webhook_deliveries_total", outcome="delivered") == 0
    assert value(failed, "pixgate_jobs_due", kind="webhook.deliver") == 0  # retries: later

    await make_due(hooks_on)
    await drain(hooks_on, rounds=1)
    retried = await scrape(client)
    assert moved(failed, retried, attempts, trigger="delivery", outcome="delivered") == 1
    assert moved(failed, retried, "pixgate_webhook_deliveries_total", outcome="delivered") == 1


async def test_the_queue_is_read_from_the_database_at_scrape_time(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    headers = await _account(rt, client)
    await cash_out(client, headers)
    async with rt.db.begin() as conn:
        later = rt.clock.now() + timedelta(hours=1)
        await job_rows.enqueue(conn, EXPIRE_CHARGE, ExpireCharge(charge_id=1), run_at=later)
        await conn.execute(
            "UPDATE jobs SET run_at = now() - interval '90 seconds' WHERE kind = $1",
            SETTLE_PAYOUT.name,
        )
    waiting = await scrape(client)
    assert value(waiting, "pixgate_database_up") == 1
    assert value(waiting, "pixgate_jobs_due", kind=SETTLE_PAYOUT.name) == 1
    assert value(waiting, "pixgate_jobs_oldest_due_seconds", kind=SETTLE_PAYOUT.name) >= 90
    assert value(waiting, "pixgate_jobs_running", kind=SETTLE_PAYOUT.name) == 0
    # scheduled ahead is not a backlog, and every kind has its series
    assert ("pixgate_jobs_due", frozenset({("kind", EXPIRE_CHARGE.name)})) in waiting
    assert value(waiting, "pixgate_jobs_due", kind=EXPIRE_CHARGE.name) == 0
    assert value(waiting, "pixgate_jobs_oldest_due_seconds", kind=EXPIRE_CHARGE.name) == 0

    async with rt.db.connection() as conn:
        await job_rows.claim(conn, worker="test", limit=5, lease_seconds=60, kinds=None)
    taken = await scrape(client)
    assert value(taken, "pixgate_jobs_due", kind=SETTLE_PAYOUT.name) == 0
    assert value(taken, "pixgate_jobs_running", kind=SETTLE_PAYOUT.name) == 1
    assert value(taken, "pixgate_jobs_oldest_due_seconds", kind=SETTLE_PAYOUT.name) == 0


async def test_the_pool_is_read_at_scrape_time(rt: Runtime, client: httpx.AsyncClient) -> None:
    idle = await scrape(client)
    async with rt.db.connection():
        held = await scrape(client)
    for scraped in (idle, held):
        assert value(scraped, "pixgate_db_pool_max_size") == rt.settings.db_pool_max
        size = value(scraped, "pixgate_db_pool_size")
        in_use, waiting = (value(scraped, f"pixgate_db_pool_{n}") for n in ("in_use", "idle"))
        assert size == in_use + waiting
    assert value(held, "pixgate_db_pool_in_use") == value(idle, "pixgate_db_pool_in_use") + 1


async def test_without_the_database_metrics_still_answer(
    rt: Runtime, app: FastAPI, client: httpx.AsyncClient
) -> None:
    pool = await asyncpg.create_pool(
        f"postgresql://postgres@127.0.0.1:{free_port()}/nothing", min_size=0, timeout=2
    )
    app.state.runtime = dataclasses.replace(
        rt,
        db=Database(pool),
        settings=rt.settings.model_copy(update={"db_connect_timeout_s": 0.5}),
    )
    try:
        response = await client.get("/metrics")
    finally:
        await pool.close()
    assert response.status_code == 200
    scraped = samples(response.text)
    assert value(scraped, "pixgate_database_up") == 0
    assert not [name for name, _ in scraped if name.startswith("pixgate_jobs_due")]
    assert value(scraped, "pixgate_db_pool_size") == 0


async def test_a_worker_process_serves_its_own_metrics(
    hooks_on: Runtime, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    """The production layout: the API without a worker (this test's app), and a `pixgate
    worker` that settles and delivers, whose metrics only its own port can tell."""
    headers = await hooked_account(client, hooks_on, receiver)
    await cash_out(client, headers)
    port = free_port()
    async with _worker(hooks_on, port):
        scraped = await _scrape_until_delivered(f"http://127.0.0.1:{port}/metrics")
    assert len(receiver.at("/hook")) == 1
    assert value(scraped, "pixgate_settlements_total", kind="cash_out", outcome="confirmed") == 1
    assert value(scraped, "pixgate_webhook_deliveries_total", outcome="delivered") == 1
    assert value(scraped, "pixgate_jobs_run_total", kind=SETTLE_PAYOUT.name, outcome="done") == 1
    assert value(scraped, "pixgate_db_pool_size") >= 1
    assert value(scraped, "pixgate_db_pool_max_size") == hooks_on.settings.db_pool_max
    # the queue is the API's to tell (the same from every process)
    assert not [name for name, _ in scraped if name.startswith("pixgate_jobs_due")]


def test_api_processes_sharing_a_port_are_counted_together(database_url: str) -> None:
    """`pixgate serve --workers 2`: whichever process answers a scrape counts the requests
    both served (each request on a connection of its own, which either process may take)."""
    command = [PIXGATE, "serve", "--no-worker", "--workers", "2"]
    with running(command, server_env(database_url)) as base:
        for _ in range(20):
            assert httpx.get(f"{base}/healthz").status_code == 200
        scrapes = [samples(httpx.get(f"{base}/metrics").text) for _ in range(6)]
    healthz = {"method": "GET", "route": "/healthz", "status": "200"}
    assert [value(scraped, "pixgate_requests_total", **healthz) for scraped in scrapes] == [20] * 6


async def _account(rt: Runtime, client: httpx.AsyncClient) -> dict[str, str]:
    return await bearer(client, await make_account(rt, balance="100.00"))


@asynccontextmanager
async def _worker(rt: Runtime, port: int) -> AsyncIterator[None]:
    """`pixgate worker --metrics-port`, stopped with SIGTERM as a supervisor does."""
    assert rt.settings.database_url
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    env |= {
        "PIXGATE_DATABASE_URL": rt.settings.database_url,
        "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "true",
        "PIXGATE_DB_POOL_MAX": str(rt.settings.db_pool_max),
    }
    process = await asyncio.create_subprocess_exec(
        *[PIXGATE, "worker", "--metrics-port", str(port)],
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        assert await process.wait() == 0


async def _scrape_until_delivered(url: str) -> Samples:
    """The worker's metrics once its webhook was delivered (a generous bound, not a timing
    assertion: the process starts, settles, then POSTs)."""
    async with httpx.AsyncClient() as http, asyncio.timeout(60):
        while True:
            try:
                scraped = samples((await http.get(url)).text)
            except httpx.TransportError:
                scraped = {}
            if value(scraped, "pixgate_webhook_deliveries_total", outcome="delivered"):
                return scraped
            await asyncio.sleep(0.1)
