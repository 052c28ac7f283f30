"""Receivers that hang, answer 500 for an hour, or drop the connection: each delivery is
retried on the schedule of docs/webhooks.md and delivered once the receiver recovers, and a
hanging receiver does not hold up the deliveries of other accounts.

Every receiver is a real socket on 127.0.0.1 and every job runs through the worker against
the test database. Simulated time: the app's clock (`rt.clock`, a FixedClock) stamps each
attempt and its `next_attempt_at`; the job's `run_at` is PostgreSQL's `now()` plus the same
delay, so a test reads the delay from the delivery, moves the clock by it, and makes the
job due (`make_due`) instead of waiting for it.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from pixgate.jobs.worker import run_once
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from pixgate.webhooks.rules.webhooks import EventType
from pixgate.webhooks.service import outbox as events
from tests.helpers import make_account, running_worker
from tests.support import FixedClock
from tests.webhooks.conftest import insert_transaction, make_due
from tests.webhooks.receiver import HANG_UP, RESET, STALL, Receiver

SCHEDULE_S = [5, 15, 45, 135, 405, 1215, 3645, 10935, 14400, 14400]
"""docs/webhooks.md: 5 s, 15 s, 45 s, 2.3 min, 6.8 min, 20 min, 1 h, 3 h, then every 4 h."""


def _within_jitter(delay: float, failures: int) -> bool:
    base = SCHEDULE_S[failures - 1]
    return 0.8 * base <= delay <= 1.2 * base


def _settings(rt: Runtime, **values: object) -> Runtime:
    rt.settings = rt.settings.model_copy(update=values)
    return rt


async def _events(rt: Runtime, account_id: int, count: int) -> None:
    """`count` confirmed cash-outs of the account, each with its event (one transaction)."""
    async with rt.db.begin() as conn:
        for _ in range(count):
            tx = await insert_transaction(conn, account_id)
            await events.record(
                conn, account_id=account_id, type=EventType.CASH_OUT, transaction_id=tx
            )


async def _account_with_hook(rt: Runtime, url: str) -> int:
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=url)
    return account.account_id


async def _deliveries(rt: Runtime, account_id: int) -> list[asyncpg.Record]:
    """The account's deliveries, each with its job and its attempts' errors and codes."""
    async with rt.db.connection() as conn:
        return await conn.fetch(
            "SELECT d.id, d.status, d.attempts, d.next_attempt_at, j.status AS job_status, "
            "j.run_at - now() AS job_wait, "
            "array_agg(a.error ORDER BY a.id) AS errors, "
            "array_agg(a.status_code ORDER BY a.id) AS codes, "
            "array_agg(a.duration_ms ORDER BY a.id) AS durations "
            "FROM webhook_deliveries d "
            "JOIN jobs j ON j.kind = 'webhook.deliver' AND (j.args->>'delivery_id')::bigint = d.id "
            "LEFT JOIN webhook_attempts a ON a.delivery_id = d.id "
            "WHERE d.account_id = $1 GROUP BY d.id, j.id ORDER BY d.id",
            account_id,
        )


async def _until(condition: Callable[[], Awaitable[bool]], *, deadline: float = 30.0) -> None:
    """Poll until `condition` holds (a bound that keeps a regression from hanging the suite)."""
    async with asyncio.timeout(deadline):
        while not await condition():  # noqa: ASYNC110 - the state is in the database
            await asyncio.sleep(0.02)


# --- a receiver that accepts and never answers ------------------------------------------------


async def test_a_hanging_receiver_is_cut_at_the_timeout_and_retried_on_schedule(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = _settings(insecure, webhook_timeout_s=1.0)
    rt.clock = clock = FixedClock(datetime.now(UTC))
    receiver.plan("/hang", STALL, STALL)
    account_id = await _account_with_hook(rt, receiver.url("/hang"))
    await _events(rt, account_id, 1)

    for failures in (1, 2):  # the second attempt finds the receiver silent: sent, as a probe
        assert await run_once(rt) == 1
        (row,) = await _deliveries(rt, account_id)
        assert (row["status"], row["attempts"], row["job_status"]) == (
            "pending",
            failures,
            "queued",
        )
        assert row["errors"][-1] == "timed out: no complete answer within 1 s"
        assert row["codes"][-1] is None
        assert 1000 <= row["durations"][-1] < 2500
        delay = (row["next_attempt_at"] - clock.now()).total_seconds()
        assert _within_jitter(delay, failures)
        assert abs(row["job_wait"].total_seconds() - delay) < 2  # the job is due then too
        assert await run_once(rt) == 0  # not before
        clock.advance(seconds=delay)
        await make_due(rt)
    assert len(receiver.at("/hang")) == 2

    assert await run_once(rt) == 1  # the receiver answers again
    (row,) = await _deliveries(rt, account_id)
    assert (row["status"], row["attempts"], row["job_status"]) == ("delivered", 3, "done")
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1


async def test_other_accounts_are_delivered_while_a_receiver_hangs(
    insecure: Runtime, receiver: Receiver
) -> None:
    """40 deliveries to a receiver that never answers, then 5 to another account's healthy
    receiver, through one worker with 16 job slots and 4 POSTs per destination: the healthy
    ones arrive while the first hanging POSTs are still in flight. The hanging receiver
    holds 4 POSTs; the deliveries behind them wait at most a second for a slot, and once it
    has answered nothing for a second they do not wait: they are not sent (a failed
    attempt, retried on the schedule). When deliveries waited for a slot without a bound,
    the hanging ones held all 16 job slots and the healthy ones came after their timeouts."""
    rt = _settings(
        insecure,
        webhook_timeout_s=4.0,
        webhook_concurrency_per_destination=4,
        shutdown_grace_s=30.0,  # the worker's end lets the hanging POSTs reach their deadline
    )
    healthy = Receiver()
    await healthy.start()
    try:
        receiver.plan("/hang", *[STALL] * 40)
        hanging_account = await _account_with_hook(rt, receiver.url("/hang"))
        healthy_account = await _account_with_hook(rt, healthy.url("/ok"))
        await _events(rt, hanging_account, 40)

        async with running_worker(rt, concurrency=16):
            await receiver.wait_for(4)
            await _events(rt, healthy_account, 5)
            await healthy.wait_for(5)

            async def healthy_delivered() -> bool:
                rows = await _deliveries(rt, healthy_account)
                return all(r["status"] == "delivered" for r in rows)

            await _until(healthy_delivered)
            hanging = await _deliveries(rt, hanging_account)
            # the 4 hanging POSTs are all still in flight: none has reached its deadline
            assert receiver.open_connections == 4
            assert not any(e and e.startswith("timed out") for r in hanging for e in r["errors"])
        # the worker's end waits for the 4 POSTs, which end at the timeout

        hanging = await _deliveries(rt, hanging_account)
        assert len(receiver.at("/hang")) == 4
        first_errors = sorted(r["errors"][0] for r in hanging)
        timed_out = [e for e in first_errors if e.startswith("timed out")]
        not_sent = [e for e in first_errors if e.startswith("not sent: ")]
        assert len(timed_out) == 4
        assert len(not_sent) == 36  # a failed attempt each, logged with its reason
        for row in hanging:  # every one failed once and waits for its retry: none dropped
            assert (row["status"], row["attempts"], row["job_status"]) == ("pending", 1, "queued")
            assert row["job_wait"] <= timedelta(seconds=6)  # the first retry's delay

        # the receiver recovers: a first retry goes to it alone (a probe); once it is
        # answered, the rest go
        receiver.plan("/hang")
        rounds = 0
        while any(r["status"] != "delivered" for r in await _deliveries(rt, hanging_account)):
            rounds += 1
            assert rounds <= 3
            await make_due(rt)
            await run_once(rt, limit=50)
        hanging = await _deliveries(rt, hanging_account)
        assert all(r["codes"].count(200) == 1 for r in hanging)  # each delivered exactly once
        assert len({r.headers["webhook-id"] for r in receiver.at("/hang")}) == 40
    finally:
        await healthy.stop()


async def test_a_resend_reaches_a_silent_receiver_beside_its_probe(
    insecure: Runtime, receiver: Receiver
) -> None:
    """While a receiver is silent only one retry at a time goes to it, but a resend the
    merchant asks for (to see whether it is back) is sent beside that one."""
    rt = _settings(insecure, webhook_timeout_s=2.0)
    receiver.plan("/hook", STALL, STALL)
    account_id = await _account_with_hook(rt, receiver.url())
    await _events(rt, account_id, 1)
    assert await run_once(rt) == 1  # runs to the deadline: the receiver is silent
    await make_due(rt)
    probe = asyncio.create_task(run_once(rt))  # the retry: the one POST allowed, hangs
    await receiver.wait_for(2)
    async with rt.db.connection() as conn:
        event_id = await conn.fetchval("SELECT id FROM events")
    result = await webhooks.resend(rt, account_id, f"evt_{event_id}", None)
    assert (result.status_code, result.message) == (200, "Webhook resent successfully")
    assert not probe.done()
    assert await probe == 1
    await make_due(rt)  # the probe's retry finds the delivery delivered: nothing is sent
    assert await run_once(rt) == 1
    (row,) = await _deliveries(rt, account_id)
    assert (row["status"], row["job_status"]) == ("delivered", "done")
    assert len(receiver.received) == 3


# --- a receiver that answers 500 for an hour --------------------------------------------------


async def test_500_for_an_hour_is_retried_on_schedule_then_delivered_once(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = insecure
    start = datetime.now(UTC)
    rt.clock = clock = FixedClock(start)
    account_id = await _account_with_hook(rt, receiver.url())
    await _events(rt, account_id, 1)

    delays: list[float] = []
    while clock.now() - start < timedelta(hours=1):
        receiver.plan("/hook", 500)
        assert await run_once(rt) == 1
        (row,) = await _deliveries(rt, account_id)
        assert (row["status"], row["job_status"], row["codes"][-1]) == ("pending", "queued", 500)
        delay = (row["next_attempt_at"] - clock.now()).total_seconds()
        assert abs(row["job_wait"].total_seconds() - delay) < 2
        delays.append(delay)
        clock.advance(seconds=delay)
        await make_due(rt)
    # attempts at about 0 s, 5 s, 20 s, 65 s, 3.3 min, 10 min and 30 min; the next one, at
    # about 1.5 h, finds the receiver answering again
    assert len(delays) == 7
    assert all(_within_jitter(delay, n) for n, delay in enumerate(delays, start=1)), delays
    assert timedelta(hours=1) < clock.now() - start < timedelta(hours=2)

    assert await run_once(rt) == 1
    (row,) = await _deliveries(rt, account_id)
    assert (row["status"], row["attempts"], row["job_status"]) == ("delivered", 8, "done")
    assert row["codes"] == [500] * 7 + [200]
    assert len(receiver.received) == 8
    assert len({(r.headers["webhook-id"], r.body) for r in receiver.received}) == 1

    clock.advance(days=1)  # nothing is sent again
    await make_due(rt)
    assert await run_once(rt) == 0
    assert len(receiver.received) == 8


# --- receivers that drop the connection -------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.parametrize(
    ("misbehaviour", "status_code", "error"),
    [
        (HANG_UP, None, "RemoteProtocolError: Server disconnected without sending a response."),
        (RESET, 200, "ReadError"),
        (None, None, "ConnectError"),
    ],
    ids=["hangs-up", "resets-mid-answer", "refuses"],
)
async def test_a_dropped_connection_is_retried_then_delivered(
    insecure: Runtime, misbehaviour: str | None, status_code: int | None, error: str
) -> None:
    """It hangs up without answering, resets the connection in the middle of a 200's body,
    or is not listening at all (`refuses`); twice, then it answers."""
    rt = insecure
    rt.clock = clock = FixedClock(datetime.now(UTC))
    receiver = Receiver()
    port = _free_port()
    if misbehaviour is not None:
        await receiver.start(port)
        receiver.plan("/hook", misbehaviour, misbehaviour)
    account_id = await _account_with_hook(rt, f"http://127.0.0.1:{port}/hook")
    await _events(rt, account_id, 1)
    try:
        for failures in (1, 2):
            assert await run_once(rt) == 1
            (row,) = await _deliveries(rt, account_id)
            assert (row["status"], row["job_status"]) == ("pending", "queued")
            assert row["codes"][-1] == status_code
            assert row["errors"][-1].startswith(error)
            assert row["durations"][-1] < 1000  # at once, not at the timeout
            delay = (row["next_attempt_at"] - clock.now()).total_seconds()
            assert _within_jitter(delay, failures)
            clock.advance(seconds=delay)
            await make_due(rt)
        if misbehaviour is None:
            await receiver.start(port)  # it comes back up
        assert await run_once(rt) == 1
    finally:
        await receiver.stop()
    (row,) = await _deliveries(rt, account_id)
    assert (row["status"], row["attempts"], row["job_status"]) == ("delivered", 3, "done")
    assert row["codes"][-1] == 200
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1
    assert len(receiver.received) == (3 if misbehaviour else 1)
