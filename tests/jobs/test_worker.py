"""A long-running worker runs each job once, and marks it done in its next claim, on the server
it claimed it on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from pixgate.core.db.pool import Database
from pixgate.jobs import queue as jobs
from pixgate.jobs import worker as worker_module
from pixgate.jobs.registry import HANDLERS, JobSpec
from pixgate.jobs.worker import Worker
from pixgate.runtime import Runtime
from tests.helpers import running_worker
from tests.processes import free_port


@dataclass
class Probe:
    ran: list[int] = field(default_factory=list)
    gate: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True)
class Count:
    n: int


@dataclass(frozen=True)
class Nothing:
    pass


COUNT = jobs.JobKind("test.count", Count)
FAIL = jobs.JobKind("test.fail", Nothing, max_attempts=1)
MARKER = jobs.JobKind("test.marker", Nothing)


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Probe:
    """`test.count` records its `n` once the gate is open; `test.fail` always raises."""
    seen = Probe()

    async def count(rt: Runtime, args: Count) -> None:
        await seen.gate.wait()
        seen.ran.append(args.n)

    async def fail(rt: Runtime, args: Nothing) -> None:
        raise RuntimeError("refused")

    monkeypatch.setitem(HANDLERS, COUNT.name, JobSpec(COUNT, count))
    monkeypatch.setitem(HANDLERS, FAIL.name, JobSpec(FAIL, fail))
    return seen


async def statuses(rt: Runtime) -> dict[str, int]:
    async with rt.db.connection() as conn:
        rows = await conn.fetch("SELECT status, count(*) AS n FROM jobs GROUP BY status")
    return {row["status"]: row["n"] for row in rows}


async def until(condition: Callable[[], Awaitable[bool]]) -> None:
    async with asyncio.timeout(10):
        while not await condition():  # noqa: ASYNC110 - the state is in the database
            await asyncio.sleep(0.02)


async def test_every_job_runs_once_and_ends_done(rt: Runtime, probe: Probe) -> None:
    probe.gate.set()
    async with running_worker(rt, concurrency=4):
        async with rt.db.begin() as conn:
            for n in range(30):
                await jobs.enqueue(conn, COUNT, Count(n))
            await jobs.enqueue(conn, FAIL, Nothing())

        async def settled() -> bool:
            return await statuses(rt) == {"done": 30, "failed": 1}

        await until(settled)
    assert sorted(probe.ran) == list(range(30))
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT max(attempts) FROM jobs") == 1
        assert (
            await conn.fetchval(
                "SELECT count(*) FROM jobs WHERE status = 'done' AND finished_at IS NULL"
            )
            == 0
        )


async def test_jobs_that_finish_during_shutdown_are_marked_done(rt: Runtime, probe: Probe) -> None:
    worker = Worker(rt, concurrency=8)
    running = asyncio.create_task(worker.run())
    async with rt.db.begin() as conn:
        for n in range(8):
            await jobs.enqueue(conn, COUNT, Count(n))

    async def all_started() -> bool:
        return await statuses(rt) == {"running": 8}

    await until(all_started)
    worker.stop()
    probe.gate.set()
    await running
    assert sorted(probe.ran) == list(range(8))
    assert await statuses(rt) == {"done": 8}


def counting_claims(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of jobs each claim of the worker takes, in order."""
    claims: list[int] = []
    claim = jobs.claim

    async def counted(conn: object, **kwargs: object) -> jobs.Claimed:
        claimed = await claim(conn, **kwargs)  # type: ignore[arg-type]
        claims.append(len(claimed.jobs))
        return claimed

    monkeypatch.setattr(jobs, "claim", counted)
    return claims


async def test_an_idle_worker_wakes_when_a_scheduled_job_falls_due(
    rt: Runtime, probe: Probe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the claim's `next_at`, the worker would sleep for the whole poll interval."""
    monkeypatch.setattr(worker_module, "IDLE_POLL_SECONDS", 60.0)
    probe.gate.set()
    async with running_worker(rt):
        async with rt.db.begin() as conn:
            due = datetime.now(UTC) + timedelta(seconds=0.3)
            await jobs.enqueue(conn, COUNT, Count(1), run_at=due)

        async def ran() -> bool:
            return probe.ran == [1]

        await until(ran)


async def test_a_wake_up_for_a_job_due_later_costs_no_claim(
    rt: Runtime, probe: Probe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cash-out's settlement waits in the sandbox: the commit that enqueues it says when it
    falls due, and the worker claims then, not at once for nothing. A job due now, enqueued
    after the later ones, is claimed by the first claim since."""
    monkeypatch.setattr(worker_module, "IDLE_POLL_SECONDS", 60.0)
    claims = counting_claims(monkeypatch)
    at_marker: list[list[int]] = []

    async def marker(rt: Runtime, args: Nothing) -> None:
        at_marker.append(list(claims))

    monkeypatch.setitem(HANDLERS, MARKER.name, JobSpec(MARKER, marker))
    async with running_worker(rt, concurrency=1):  # one slot: one claim each time

        async def idle() -> bool:
            return claims == [0]

        await until(idle)
        later = datetime.now(UTC) + timedelta(seconds=30)
        for n in range(5):
            async with rt.db.begin() as conn:
                await jobs.enqueue(conn, COUNT, Count(n), run_at=later)
        async with rt.db.begin() as conn:
            await jobs.enqueue(conn, MARKER, Nothing())

        async def marked() -> bool:
            return bool(at_marker)

        await until(marked)
    assert at_marker == [[0, 1]]
    assert probe.ran == []


async def test_a_due_time_heard_from_another_process_wakes_the_worker_then(
    rt: Runtime, probe: Probe, monkeypatch: pytest.MonkeyPatch, database_url: str
) -> None:
    """Another process's commit reaches this worker as a NOTIFY whose payload is the due
    time of the job it enqueued."""
    monkeypatch.setattr(worker_module, "IDLE_POLL_SECONDS", 60.0)
    probe.gate.set()
    async with running_worker(rt):
        other = await asyncpg.connect(database_url)
        try:
            due = datetime.now(UTC) + timedelta(seconds=0.3)
            async with other.transaction():
                await other.execute(
                    "SELECT job_enqueue($1, $2::jsonb, $3, $4)", COUNT.name, '{"n": 7}', due, 1
                )
            await other.execute("SELECT pg_notify($1, $2)", jobs.CHANNEL, due.isoformat())
        finally:
            await other.close()

        async def ran() -> bool:
            return probe.ran == [7]

        await until(ran)


async def dead_job_rows(rt: Runtime) -> int:
    """Dead row versions left in the jobs table, counted from its pages."""
    async with rt.db.connection() as conn:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        count: int = await conn.fetchval("SELECT dead_tuple_count FROM pgstattuple('jobs')")
    return count


async def test_the_worker_vacuums_what_finished_jobs_leave(rt: Runtime, probe: Probe) -> None:
    """Each claim and finish leaves a dead row version that later claims would walk again."""
    probe.gate.set()
    async with running_worker(rt, concurrency=4, vacuum_every=10):
        for n in range(12):  # one at a time: every job is claimed, run and finished alone
            async with rt.db.begin() as conn:
                await jobs.enqueue(conn, COUNT, Count(n))

            async def ran(n: int = n) -> bool:
                return n in probe.ran

            await until(ran)
    assert await statuses(rt) == {"done": 12}
    assert await dead_job_rows(rt) < 12  # without the vacuum: two per job, 24


async def test_done_jobs_past_their_retention_are_deleted_failed_ones_kept(
    rt: Runtime, probe: Probe
) -> None:
    async with rt.db.connection() as conn:
        await conn.execute(
            "INSERT INTO jobs (kind, args, status, finished_at) VALUES "
            "('test.count', '{}', 'done', now() - interval '2 days'), "
            "('test.count', '{}', 'failed', now() - interval '2 days'), "
            "('test.count', '{}', 'done', now() - interval '1 hour')"
        )
    probe.gate.set()
    async with running_worker(rt, concurrency=4, vacuum_every=1):  # upkeep after each job
        async with rt.db.begin() as conn:
            await jobs.enqueue(conn, COUNT, Count(1))

        async def pruned() -> bool:
            return await statuses(rt) == {"done": 2, "failed": 1}

        await until(pruned)
    async with rt.db.connection() as conn:
        ages = await conn.fetch(
            "SELECT status, now() - finished_at < interval '1 day' AS recent "
            "FROM jobs ORDER BY status, recent"
        )
    assert [(a["status"], a["recent"]) for a in ages] == [
        ("done", True),
        ("done", True),
        ("failed", False),
    ]


async def test_jobs_still_running_after_the_grace_are_given_back_due_at_once(
    rt: Runtime, probe: Probe
) -> None:
    """SIGTERM must end the worker in bounded time; an interrupted job must not wait out its
    lease, nor count as a failed attempt."""
    rt.settings = rt.settings.model_copy(update={"shutdown_grace_s": 0.3})
    worker = Worker(rt, concurrency=4)
    running = asyncio.create_task(worker.run())
    async with rt.db.begin() as conn:
        for n in range(3):
            await jobs.enqueue(conn, COUNT, Count(n))

    async def all_started() -> bool:
        return await statuses(rt) == {"running": 3}

    await until(all_started)
    stopped_at = asyncio.get_running_loop().time()
    worker.stop()
    await running
    assert asyncio.get_running_loop().time() - stopped_at < 2.0
    assert probe.ran == []
    async with rt.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT status, attempts, locked_until, run_at <= now() AS due, last_error FROM jobs"
        )
    assert [tuple(row.values()) for row in rows] == [
        ("queued", 0, None, True, "worker stopped")
    ] * 3

    probe.gate.set()
    async with running_worker(rt, concurrency=4):

        async def all_done() -> bool:
            return await statuses(rt) == {"done": 3}

        await until(all_done)
    assert sorted(probe.ran) == [0, 1, 2]


async def test_a_job_whose_worker_vanished_is_retaken_after_its_lease(
    rt: Runtime, probe: Probe
) -> None:
    """A worker SIGKILLed mid-job leaves the job `running` under its name; no one releases it,
    so the lease is what brings it back (tests/webhooks/test_worker_crash.py kills a real
    process; here the dead worker is a claim that is never finished)."""
    rt.settings = rt.settings.model_copy(update={"job_lease_seconds": 0.5})
    async with rt.db.begin() as conn:
        await jobs.enqueue(conn, COUNT, Count(7))
    async with rt.db.connection() as conn:
        claimed = await jobs.claim(conn, worker="dead", limit=1, lease_seconds=0.5, kinds=None)
    assert len(claimed.jobs) == 1
    probe.gate.set()
    async with running_worker(rt, concurrency=4):

        async def done() -> bool:
            return await statuses(rt) == {"done": 1}

        await until(done)
    assert probe.ran == [7]
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT attempts FROM jobs") == 2


async def test_a_job_finished_as_the_database_went_away_is_run_again_not_marked_done(
    rt: Runtime, probe: Probe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its handler's commit was acknowledged by a server that then went away, so it may be
    lost (a failover to a standby that had not received it). The claim that would have marked
    the job done fails; the job is not marked done by a later one, on whatever server answers
    then: its lease gives it back and it runs again."""
    rt.settings = rt.settings.model_copy(update={"job_lease_seconds": 0.5})
    monkeypatch.setattr(worker_module, "IDLE_POLL_SECONDS", 0.1)  # claims while it is gone
    database = rt.db
    unreachable = Database(
        await asyncpg.create_pool(
            f"postgresql://postgres@127.0.0.1:{free_port()}/nothing", min_size=0, timeout=1
        )
    )

    lost = asyncio.Event()

    async def count_then_lose_the_database(rt_: Runtime, args: Count) -> None:
        probe.ran.append(args.n)
        if not lost.is_set():
            rt_.db = unreachable  # the next claim cannot be made
            lost.set()

    monkeypatch.setitem(HANDLERS, COUNT.name, JobSpec(COUNT, count_then_lose_the_database))
    async with database.begin() as conn:
        await jobs.enqueue(conn, COUNT, Count(3))
    try:
        async with running_worker(rt, concurrency=4):
            async with asyncio.timeout(10):
                await lost.wait()
            await asyncio.sleep(0.3)  # the worker's claims fail meanwhile
            rt.db = database  # a server answers again

            async def done() -> bool:
                return await statuses(rt) == {"done": 1}

            await until(done)
    finally:
        rt.db = database
        await unreachable.close()
    assert probe.ran == [3, 3], "marked done without running again"
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT attempts FROM jobs") == 2


async def test_a_job_claimed_on_a_server_since_replaced_is_run_again_not_marked_done(
    rt: Runtime, probe: Probe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failover to an asynchronous standby between a handler's commit and the next claim,
    with no error seen: the pool reconnects to the promoted standby, which has the claim but
    maybe not the commit. Here the claim that took the job says it was made on another
    server; the next claim, on this one, must not mark the job done: its lease gives it back
    and it runs again."""
    rt.settings = rt.settings.model_copy(update={"job_lease_seconds": 0.5})
    monkeypatch.setattr(worker_module, "IDLE_POLL_SECONDS", 0.1)
    claim = jobs.claim
    taken_on_the_old_server: list[int] = []

    async def first_on_an_old_server(conn: object, **kwargs: object) -> jobs.Claimed:
        claimed = await claim(conn, **kwargs)  # type: ignore[arg-type]
        if claimed.jobs and not taken_on_the_old_server:
            taken_on_the_old_server.extend(row.id for row in claimed.jobs)
            return replace(claimed, server=claimed.server - timedelta(hours=1))
        return claimed

    monkeypatch.setattr(jobs, "claim", first_on_an_old_server)
    probe.gate.set()
    async with rt.db.begin() as conn:
        await jobs.enqueue(conn, COUNT, Count(5))
    async with running_worker(rt, concurrency=4):

        async def done() -> bool:
            return await statuses(rt) == {"done": 1}

        await until(done)
    assert len(taken_on_the_old_server) == 1
    assert probe.ran == [5, 5], "marked done on a server that may not hold its work"
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT attempts FROM jobs") == 2


async def test_webhook_deliveries_leave_slots_for_other_jobs(
    rt: Runtime, probe: Probe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deliveries to receivers that hang hold their slots until the attempt's timeout; however
    many are due, a settlement due meanwhile must still find a slot."""
    hanging = asyncio.Event()
    started: list[int] = []

    async def deliver(rt: Runtime, args: jobs.DeliverWebhook) -> None:
        started.append(args.delivery_id)
        await hanging.wait()

    monkeypatch.setitem(HANDLERS, jobs.DELIVER_WEBHOOK.name, JobSpec(jobs.DELIVER_WEBHOOK, deliver))
    probe.gate.set()
    async with running_worker(rt, concurrency=4) as worker:
        assert worker.webhook_slots == 3
        async with rt.db.begin() as conn:
            for n in range(10):
                await jobs.enqueue(conn, jobs.DELIVER_WEBHOOK, jobs.DeliverWebhook(n))

        async def deliveries_hang() -> bool:
            return len(started) == 3

        await until(deliveries_hang)
        async with rt.db.begin() as conn:
            for n in range(5):
                await jobs.enqueue(conn, COUNT, Count(n))

        async def others_ran() -> bool:
            return sorted(probe.ran) == list(range(5))

        await until(others_ran)
        assert len(started) == 3  # the share held: no fourth delivery took the free slot
        hanging.set()

        async def all_done() -> bool:
            return await statuses(rt) == {"done": 15}

        await until(all_done)
    assert sorted(started) == list(range(10))


@pytest.mark.parametrize(("window_ms", "claimed"), [(300.0, [3]), (0.0, [1, 1, 1])])
async def test_jobs_falling_due_within_the_window_are_claimed_together(
    rt: Runtime,
    probe: Probe,
    monkeypatch: pytest.MonkeyPatch,
    window_ms: float,
    claimed: list[int],
) -> None:
    """Settlements fall due one by one, each its sandbox delay after its cash-out; a worker
    that claims each as it falls due pays a claim, a settlement and a finish for each. It
    claims the window after the first, and takes every job due by then in one claim."""
    monkeypatch.setattr(worker_module, "IDLE_POLL_SECONDS", 60.0)
    rt.settings = rt.settings.model_copy(update={"job_window_ms": window_ms})
    claims = counting_claims(monkeypatch)
    probe.gate.set()
    async with running_worker(rt):

        async def idle() -> bool:
            return claims == [0]

        await until(idle)
        first = datetime.now(UTC) + timedelta(seconds=0.2)
        for n in range(3):
            async with rt.db.begin() as conn:
                await jobs.enqueue(conn, COUNT, Count(n), run_at=first + n * timedelta(seconds=0.1))

        async def ran() -> bool:
            return sorted(probe.ran) == [0, 1, 2]

        await until(ran)
    assert [n for n in claims if n] == claimed


@pytest.mark.parametrize(("window_ms", "claimed"), [(1000.0, [1, 2]), (0.0, [1, 1, 1])])
async def test_the_claim_after_the_last_job_finishes_waits_the_window(
    rt: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    window_ms: float,
    claimed: list[int],
) -> None:
    """At a steady trickle of settlements, a claim's jobs are still running when the next
    fall due. The claim that marks the last of them done waits the window too: claimed as
    that job finished, the jobs due by then would go alone, a claim and a settlement each,
    and the window would never gather them."""
    monkeypatch.setattr(worker_module, "IDLE_POLL_SECONDS", 60.0)
    rt.settings = rt.settings.model_copy(update={"job_window_ms": window_ms})
    claims = counting_claims(monkeypatch)
    ran: list[int] = []

    async def slow_first(rt: Runtime, args: Count) -> None:
        await asyncio.sleep(0.6 if args.n == 0 else 0)
        ran.append(args.n)

    monkeypatch.setitem(HANDLERS, COUNT.name, JobSpec(COUNT, slow_first))
    start = datetime.now(UTC)
    # due at 0 (runs 0.6 s), 0.3 s and 0.9 s: the second falls due while the first runs, the
    # third after it finished and before the window after the second has passed
    async with rt.db.begin() as conn:
        for n, due in enumerate((0.0, 0.3, 0.9)):
            await jobs.enqueue(conn, COUNT, Count(n), run_at=start + timedelta(seconds=due))
    async with running_worker(rt):

        async def all_ran() -> bool:
            return sorted(ran) == [0, 1, 2]

        await until(all_ran)
    assert [n for n in claims if n] == claimed


STAGGER = jobs.JobKind("test.stagger", Count)


async def finished_at(rt: Runtime) -> list[datetime | None]:
    async with rt.db.connection() as conn:
        rows = await conn.fetch("SELECT finished_at FROM jobs ORDER BY id")
    return [row["finished_at"] for row in rows]


@pytest.mark.parametrize(("window_ms", "statements"), [(1000.0, 1), (0.0, 3)])
async def test_jobs_finishing_within_the_window_are_marked_done_together(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch, window_ms: float, statements: int
) -> None:
    """Jobs claimed together finish a little apart; each finish waits the window for the
    others, and the last one running marks them all done in one claim (one statement: one
    `finished_at`)."""
    rt.settings = rt.settings.model_copy(update={"job_window_ms": window_ms})

    async def stagger(rt: Runtime, args: Count) -> None:
        await asyncio.sleep(0.05 * args.n)

    monkeypatch.setitem(HANDLERS, STAGGER.name, JobSpec(STAGGER, stagger))
    # enqueued before the worker starts, so that its first claim takes all three and no
    # wake-up heard later (the enqueue's) makes it claim again before they finish
    async with rt.db.begin() as conn:
        for n in range(3):
            await jobs.enqueue(conn, STAGGER, Count(n))
    async with running_worker(rt, concurrency=4):

        async def done() -> bool:
            return await statuses(rt) == {"done": 3}

        await until(done)
    assert len(set(await finished_at(rt))) == statements


async def test_a_job_still_running_does_not_hold_back_marking_others_done(
    rt: Runtime, probe: Probe, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished job waits the window for others to finish, not for every job running (a
    webhook delivery can take its whole timeout)."""
    monkeypatch.setattr(worker_module, "IDLE_POLL_SECONDS", 60.0)
    rt.settings = rt.settings.model_copy(update={"job_window_ms": 100.0})

    async def stagger(rt: Runtime, args: Count) -> None:
        await asyncio.sleep(0)

    monkeypatch.setitem(HANDLERS, STAGGER.name, JobSpec(STAGGER, stagger))
    async with running_worker(rt, concurrency=4):
        async with rt.db.begin() as conn:
            await jobs.enqueue(conn, COUNT, Count(1))  # waits for the gate
            await jobs.enqueue(conn, STAGGER, Count(0))

        async def one_done() -> bool:
            return await statuses(rt) == {"done": 1, "running": 1}

        await until(one_done)
        probe.gate.set()
