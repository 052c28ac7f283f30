"""A worker killed (SIGKILL) in the middle of a POST: after its lease, another worker delivers
the same message (same webhook-id). At least once, never lost."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from pixgate.webhooks import verify_signature
from pixgate.webhooks.service import outbox as events
from tests.helpers import make_account
from tests.webhooks.conftest import insert_transaction
from tests.webhooks.receiver import STALL, Receiver


async def _spawn_worker(rt: Runtime) -> asyncio.subprocess.Process:
    assert rt.settings.database_url
    env = {
        **os.environ,
        "PIXGATE_DATABASE_URL": rt.settings.database_url,
        "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "true",
        "PIXGATE_JOB_LEASE_SECONDS": "2",
        "PIXGATE_WEBHOOK_TIMEOUT_S": "120",  # the stalled POST must not time out by itself
        "PIXGATE_LOG_JSON": "true",
    }
    command = Path(sys.executable).parent / "pixgate"
    return await asyncio.create_subprocess_exec(
        str(command),
        "worker",
        "--concurrency",
        "4",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def _delivery_status(rt: Runtime) -> str:
    async with rt.db.connection() as conn:
        status: str = await conn.fetchval("SELECT status FROM webhook_deliveries")
        return status


async def test_sigkill_mid_delivery_is_delivered_after_restart(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = insecure
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url())
    secret = await webhooks.reveal_secret(rt, account.account_id)
    receiver.plan("/hook", STALL, 200)
    async with rt.db.begin() as conn:
        tx = await insert_transaction(conn, account.account_id)
        await events.record(conn, account_id=account.account_id, type="cash_out", transaction_id=tx)

    first = await _spawn_worker(rt)
    try:
        await receiver.wait_for(1)  # the first worker is inside the POST, which hangs
    finally:
        first.send_signal(signal.SIGKILL)
        await first.wait()
    assert first.returncode == -signal.SIGKILL
    assert await _delivery_status(rt) == "pending"

    second = await _spawn_worker(rt)
    try:
        await receiver.wait_for(2)
        async with asyncio.timeout(30):
            while await _delivery_status(rt) != "delivered":  # noqa: ASYNC110 - another process
                await asyncio.sleep(0.05)
    finally:
        second.send_signal(signal.SIGTERM)
        await second.wait()

    first_try, retry = receiver.received
    assert first_try.headers["webhook-id"] == retry.headers["webhook-id"]
    assert first_try.body == retry.body
    assert verify_signature(secret, retry.headers, retry.body)
    async with rt.db.connection() as conn:
        attempts = await conn.fetch("SELECT status_code FROM webhook_attempts")
        job = await conn.fetchrow("SELECT status, attempts FROM jobs")
    assert [a["status_code"] for a in attempts] == [200]  # the killed attempt never logged
    assert (job["status"], job["attempts"]) == ("done", 2)
