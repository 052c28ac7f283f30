"""The delivery engine end to end: outbox fan-out, signed POSTs to a live receiver, retries,
destination checks at delivery time, secret rotation, and a burst of 500 events."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

import httpx
import orjson
import structlog

from pixgate.jobs.worker import run_once
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from pixgate.webhooks import verify_signature
from pixgate.webhooks.service import outbox as events
from tests.helpers import bearer, make_account
from tests.support import FixedClock, drain
from tests.webhooks.conftest import insert_transaction, make_due
from tests.webhooks.receiver import STALL, Receiver


async def _secret(rt: Runtime, account_id: int) -> str:
    return await webhooks.reveal_secret(rt, account_id)


async def _confirmed_event(
    rt: Runtime, account_id: int, type_: str = "cash_out", **kw: object
) -> int:
    async with rt.db.begin() as conn:
        tx = await insert_transaction(conn, account_id, **kw)  # type: ignore[arg-type]
        return await events.record(conn, account_id=account_id, type=type_, transaction_id=tx)


async def test_three_urls_each_receive_the_event_signed(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = insecure
    account = await make_account(rt)
    for path in ("/a", "/b", "/c"):
        await webhooks.add(
            rt,
            account.account_id,
            event_type="cash_out",
            url=receiver.url(path),
            headers=[("X-Token", f"t{path}")],
        )
    secret = await _secret(rt, account.account_id)
    await _confirmed_event(rt, account.account_id)

    assert await drain(rt) == 3
    assert sorted(r.path for r in receiver.received) == ["/a", "/b", "/c"]
    ids = set()
    for request in receiver.received:
        assert verify_signature(secret, request.headers, request.body)
        assert request.headers["x-token"] == f"t{request.path}"
        assert request.headers["content-type"] == "application/json"
        assert orjson.loads(request.body)["event"] == "CashOut"
        ids.add(request.headers["webhook-id"])
    assert len(ids) == 3
    async with rt.db.connection() as conn:
        states = await conn.fetch("SELECT status, attempts FROM webhook_deliveries")
    assert [(s["status"], s["attempts"]) for s in states] == [("delivered", 1)] * 3


async def test_event_of_a_rolled_back_change_is_never_sent(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url())
    try:
        async with rt.db.begin() as conn:
            tx = await insert_transaction(conn, account.account_id)
            await events.record(
                conn, account_id=account.account_id, type="cash_out", transaction_id=tx
            )
            raise RuntimeError("the state change fails after the event was written")
    except RuntimeError:
        pass
    assert await drain(rt) == 0
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT count(*) FROM webhook_deliveries") == 0
    assert receiver.received == []


async def test_500_twice_then_200_is_delivered_on_the_third_attempt(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url())
    receiver.plan("/hook", 500, 500, 200)
    await _confirmed_event(rt, account.account_id)

    assert await run_once(rt) == 1
    async with rt.db.connection() as conn:
        job = await conn.fetchrow("SELECT status, run_at - now() AS wait FROM jobs")
    assert job["status"] == "queued"
    assert timedelta(0) < job["wait"] <= timedelta(seconds=10)
    assert await run_once(rt) == 0  # not due yet
    await make_due(rt)
    assert await run_once(rt) == 1
    await make_due(rt)
    assert await run_once(rt) == 1

    assert len(receiver.received) == 3
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1
    assert len({r.body for r in receiver.received}) == 1
    async with rt.db.connection() as conn:
        delivery = await conn.fetchrow("SELECT * FROM webhook_deliveries")
        attempts = await conn.fetch(
            "SELECT status_code, duration_ms, response_excerpt, trigger FROM webhook_attempts "
            "ORDER BY id"
        )
        job_status = await conn.fetchval("SELECT status FROM jobs")
    assert (delivery["status"], delivery["attempts"], delivery["last_status_code"]) == (
        "delivered",
        3,
        200,
    )
    assert [a["status_code"] for a in attempts] == [500, 500, 200]
    assert all(a["duration_ms"] >= 0 and a["response_excerpt"] for a in attempts)
    assert job_status == "done"


async def test_failed_after_the_retry_window(insecure: Runtime, receiver: Receiver) -> None:
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url())
    receiver.plan("/hook", 503, 503)
    receiver.answer_headers["/hook"] = {"Retry-After": "120"}
    await _confirmed_event(rt, account.account_id)
    await run_once(rt)
    async with rt.db.connection() as conn:
        wait = await conn.fetchval("SELECT run_at - now() FROM jobs")
    assert wait > timedelta(seconds=100)  # Retry-After honoured over the 5 s schedule

    rt.clock = FixedClock(rt.clock.now() + timedelta(days=3, minutes=1))
    await make_due(rt)
    await run_once(rt)
    async with rt.db.connection() as conn:
        delivery = await conn.fetchrow("SELECT status, attempts FROM webhook_deliveries")
        job_status = await conn.fetchval("SELECT status FROM jobs")
    assert (delivery["status"], delivery["attempts"]) == ("failed", 2)
    assert job_status == "done"


async def test_redirect_is_a_failure_and_not_followed(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url("/moved"))
    receiver.plan("/moved", 302)
    receiver.answer_headers["/moved"] = {"Location": receiver.url("/elsewhere")}
    await _confirmed_event(rt, account.account_id)
    await run_once(rt)
    assert [r.path for r in receiver.received] == ["/moved"]
    async with rt.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT d.status, a.status_code, a.error FROM webhook_deliveries d "
            "JOIN webhook_attempts a ON a.delivery_id = d.id"
        )
    assert (row["status"], row["status_code"]) == ("pending", 302)
    assert "redirect" in row["error"]


async def test_destination_rechecked_at_delivery(insecure: Runtime, receiver: Receiver) -> None:
    """Registered while loopback was allowed; once it is not, delivery refuses to connect."""
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url())
    await _confirmed_event(rt, account.account_id)
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": False})
    await run_once(rt)
    assert receiver.received == []
    async with rt.db.connection() as conn:
        error = await conn.fetchval("SELECT error FROM webhook_attempts")
    assert "destination refused" in error


async def test_rotation_overlap_both_secrets_sign(insecure: Runtime, receiver: Receiver) -> None:
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_in", url=receiver.url())
    old = await _secret(rt, account.account_id)
    new = await webhooks.rotate_secret(rt, account.account_id)
    await _confirmed_event(rt, account.account_id, "cash_in", operation="PAYMENT", kind="cash_in")
    await drain(rt)
    (request,) = receiver.received
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    assert verify_signature(old, request.headers, request.body)
    assert verify_signature(new, request.headers, request.body)
    assert orjson.loads(request.body)["event"] == "CashIn"


async def test_v1_and_v2_urls_get_the_same_facts(insecure: Runtime, receiver: Receiver) -> None:
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url("/v1"))
    await webhooks.add(
        rt, account.account_id, event_type="cash_out", url=receiver.url("/v2"), version="v2"
    )
    await _confirmed_event(
        rt,
        account.account_id,
        kind="dict_transfer",
        idempotency_key="5b8f0a54-2f7e-4a8e-9d2c-1f1f7c3a9b10",
    )
    await drain(rt)
    v1 = orjson.loads(receiver.at("/v1")[0].body)
    v2 = orjson.loads(receiver.at("/v2")[0].body)
    assert v2["type"] == "TRANSFER"
    assert v2["data"]["endToEndId"] == v1["endToEndId"]
    assert v2["data"]["payment"]["amount"] == f"{v1['originalAmount']:.2f}"
    assert v2["data"]["idempotencyKey"] == "5b8f0a54-2f7e-4a8e-9d2c-1f1f7c3a9b10"
    assert v2["data"]["creditorAccount"]["document"] == v1["counterpart"]["document"]


async def test_burst_of_500_events_none_missing(insecure: Runtime, receiver: Receiver) -> None:
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url())

    async def confirm_batch(n: int) -> None:
        async with rt.db.begin() as conn:
            for _ in range(n):
                tx = await insert_transaction(conn, account.account_id)
                await events.record(
                    conn, account_id=account.account_id, type="cash_out", transaction_id=tx
                )

    await asyncio.gather(*(confirm_batch(25) for _ in range(20)))
    # a job that met the database out of connections runs again (at least once), so the
    # count is of deliveries and of what arrived, not of job runs
    await drain(rt, rounds=1000)
    async with rt.db.connection() as conn:
        states = await conn.fetch("SELECT status, count(*) FROM webhook_deliveries GROUP BY 1")
    assert [(s["status"], s["count"]) for s in states] == [("delivered", 500)]
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 500
    assert len({orjson.loads(r.body)["transactionId"] for r in receiver.received}) == 500


async def test_posts_beyond_the_destinations_limit_wait_and_others_do_not(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = insecure
    rt.settings = rt.settings.model_copy(update={"webhook_concurrency_per_destination": 2})
    receiver.plan("/slow", STALL, STALL, STALL, STALL)
    other = Receiver()
    await other.start()

    def post(url: str) -> Coroutine[Any, Any, webhooks.Attempt]:
        return webhooks.post(rt, url=url, body=b"{}", message_id="msg_1", headers={}, secrets=[])

    try:
        stalled = [asyncio.create_task(post(receiver.url("/slow"))) for _ in range(4)]
        await receiver.wait_for(2)
        assert (await post(other.url())).ok  # another host and port is not held up
        assert len(receiver.at("/slow")) == 2  # the other two wait for a free slot
        for call in stalled:
            call.cancel()
        await asyncio.gather(*stalled, return_exceptions=True)
        assert (await post(receiver.url())).ok  # the cancelled ones gave their slots back
    finally:
        await other.stop()


async def test_a_stored_url_or_header_that_breaks_the_rules_is_never_sent(
    insecure: Runtime, receiver: Receiver, client: httpx.AsyncClient
) -> None:
    """Stored before registration refused them: no POST, a failed attempt that says why (by
    the worker and by a resend), a warning logged without the value, and retries go on, so
    registering the URL again with valid headers delivers."""
    rt = insecure
    account = await make_account(rt)
    for path in ("/url", "/header"):
        await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url(path))
    async with rt.db.connection() as conn:
        await conn.execute(
            "UPDATE webhook_endpoints SET url = url || $1 WHERE url LIKE '%/url'",
            "\r\nX-Evil: 1",
        )
        await conn.execute(
            "UPDATE webhook_endpoints SET headers = $1 WHERE url LIKE '%/header'",
            {"X-Token": "s3cr3t\r\nX-Evil: 1"},
        )
    event_id = await _confirmed_event(rt, account.account_id)
    with structlog.testing.capture_logs() as logs:
        assert await run_once(rt) == 2
    assert receiver.received == []
    async with rt.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT d.status, a.status_code, a.error FROM webhook_attempts a "
            "JOIN webhook_deliveries d ON d.id = a.delivery_id ORDER BY a.url"
        )
    assert [(r["status"], r["status_code"]) for r in rows] == [("pending", None)] * 2
    assert rows[0]["error"] == (
        "not sent: custom headers refused: header 'X-Token' value must be at most 1024 "
        "printable ASCII characters, spaces only between them (no line breaks, tabs or other "
        "control characters)"
    )
    assert rows[1]["error"].startswith("destination refused: url must not contain spaces")
    refusals = [e for e in logs if e["event"] == "webhook.refused_before_sending"]
    assert [e["log_level"] for e in refusals] == ["warning"] * 2
    assert "s3cr3t" not in str(logs) and "X-Evil" not in str(logs)

    response = await client.post(
        f"/api/resend-webhook/evt_{event_id}", headers=await bearer(client, account)
    )
    assert response.status_code == 200, response.text
    assert response.json()["message"].startswith("Webhook could not be delivered: ")
    assert receiver.received == []
    async with rt.db.connection() as conn:
        resent = await conn.fetchval(
            "SELECT count(*) FROM webhook_attempts WHERE trigger = 'resend' AND error <> ''"
        )
    assert resent == 2

    await webhooks.add(
        rt,
        account.account_id,
        event_type="cash_out",
        url=receiver.url("/header"),
        headers=[("X-Token", "s3cr3t")],
    )
    await make_due(rt)
    await drain(rt)
    (request,) = receiver.received
    assert request.path == "/header" and request.headers["x-token"] == "s3cr3t"
