"""One claim takes due jobs oldest first, retakes jobs whose worker's lease ran out, and marks
the claimer's finished jobs done (on the server they were claimed on), all in one
statement."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pixgate.jobs import queue as jobs
from pixgate.runtime import Runtime


@dataclass(frozen=True)
class Numbered:
    n: int


async def add(rt: Runtime, kind: str = "test.a", *, run_in: float = -1.0, n: int = 0) -> int:
    async with rt.db.begin() as conn:
        return await jobs.enqueue(
            conn,
            jobs.JobKind(kind, Numbered),
            Numbered(n),
            run_at=datetime.now(UTC) + timedelta(seconds=run_in),
        )


async def claim(
    rt: Runtime,
    worker: str = "w1",
    *,
    limit: int = 10,
    kinds: list[str] | None = None,
    finished: jobs.Finished | None = None,
) -> jobs.Claimed:
    async with rt.db.connection() as conn:
        return await jobs.claim(
            conn, worker=worker, limit=limit, lease_seconds=60, kinds=kinds, finished=finished
        )


async def end_leases(rt: Runtime, job_ids: list[int]) -> None:
    """As if the workers holding these jobs had died: their leases ran out a second ago."""
    async with rt.db.connection() as conn:
        await conn.execute(
            "UPDATE jobs SET locked_until = now() - interval '1 second' WHERE id = ANY($1)",
            job_ids,
        )


async def job_row(rt: Runtime, job_id: int) -> dict[str, object]:
    async with rt.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT status, attempts, locked_by FROM jobs WHERE id = $1", job_id
        )
    assert row is not None
    return dict(row)


async def test_due_jobs_come_oldest_first_up_to_the_limit(rt: Runtime) -> None:
    late = await add(rt, run_in=-1)
    early = await add(rt, run_in=-3)
    middle = await add(rt, run_in=-2)
    first = await claim(rt, limit=2)
    assert {row.id for row in first.jobs} == {early, middle}
    assert [row.attempts for row in first.jobs] == [1, 1]
    second = await claim(rt, "w2", limit=2)
    assert [row.id for row in second.jobs] == [late]
    assert (await claim(rt, "w3")).jobs == []
    assert await job_row(rt, late) == {"status": "running", "attempts": 1, "locked_by": "w2"}


async def test_a_job_not_due_is_left_and_its_time_told(rt: Runtime) -> None:
    later = await add(rt, run_in=30)
    claimed = await claim(rt)
    assert claimed.jobs == []
    async with rt.db.connection() as conn:
        run_at = await conn.fetchval("SELECT run_at FROM jobs WHERE id = $1", later)
    assert claimed.next_at == run_at


async def test_a_job_whose_lease_ran_out_is_retaken_and_a_live_one_is_not(rt: Runtime) -> None:
    stale = await add(rt)
    live = await add(rt)
    await claim(rt, "dead-worker")
    await end_leases(rt, [stale])
    retaken = await claim(rt, "w2")
    assert [(row.id, row.attempts) for row in retaken.jobs] == [(stale, 2)]
    assert (await job_row(rt, live))["locked_by"] == "dead-worker"


async def test_due_and_retaken_jobs_share_the_limit(rt: Runtime) -> None:
    stale = [await add(rt) for _ in range(2)]
    await claim(rt, "dead-worker")
    await end_leases(rt, stale)
    fresh = await add(rt)
    claimed = await claim(rt, "w2", limit=2)
    assert {row.id for row in claimed.jobs} == set(stale)  # the older run_at first
    assert [row.id for row in (await claim(rt, "w3", limit=2)).jobs] == [fresh]


async def test_only_the_kinds_asked_for(rt: Runtime) -> None:
    wanted = await add(rt, "test.b")
    other = await add(rt, "test.a")
    claimed = await claim(rt, kinds=["test.b"])
    assert [row.id for row in claimed.jobs] == [wanted]
    assert (await job_row(rt, other))["status"] == "queued"


async def test_a_claim_of_some_kinds_tells_only_their_next_time(rt: Runtime) -> None:
    await add(rt, "test.a", run_in=10)
    wanted = await add(rt, "test.b", run_in=30)
    claimed = await claim(rt, kinds=["test.b"])
    async with rt.db.connection() as conn:
        run_at = await conn.fetchval("SELECT run_at FROM jobs WHERE id = $1", wanted)
    assert claimed.jobs == []
    assert claimed.next_at == run_at


async def test_a_claim_of_some_kinds_marks_done_the_finished_jobs_of_any_kind(
    rt: Runtime,
) -> None:
    finished = await add(rt, "test.a")
    server = (await claim(rt, "w1")).server
    await claim(rt, "w1", kinds=["test.b"], finished=jobs.Finished(server, [finished]))
    assert (await job_row(rt, finished))["status"] == "done"


async def test_finished_jobs_are_marked_done_by_their_own_worker_only(rt: Runtime) -> None:
    mine = await add(rt)
    server = (await claim(rt, "w1")).server
    theirs = await add(rt)
    await claim(rt, "w2")
    await claim(rt, "w1", finished=jobs.Finished(server, [mine, theirs]))
    assert (await job_row(rt, mine))["status"] == "done"
    assert (await job_row(rt, theirs))["status"] == "running"


async def test_a_job_finished_in_this_claim_is_not_retaken_by_it(rt: Runtime) -> None:
    expired = await add(rt)
    server = (await claim(rt, "w1")).server
    await end_leases(rt, [expired])
    claimed = await claim(rt, "w1", finished=jobs.Finished(server, [expired]))
    assert claimed.jobs == []
    assert (await job_row(rt, expired))["status"] == "done"


async def test_a_claim_names_its_server_by_its_start(rt: Runtime) -> None:
    claimed = await claim(rt)
    async with rt.db.connection() as conn:
        assert claimed.server == await conn.fetchval("SELECT pg_postmaster_start_time()")


async def test_jobs_claimed_on_another_server_are_not_marked_done_here(rt: Runtime) -> None:
    """As after a failover to an asynchronous standby: it received the claim but maybe not
    the handler's commit, so only the lease may give the job back (to run again)."""
    job = await add(rt)
    server = (await claim(rt, "w1")).server
    elsewhere = jobs.Finished(server - timedelta(hours=1), [job])
    await claim(rt, "w1", finished=elsewhere)
    assert (await job_row(rt, job))["status"] == "running"
    async with rt.db.connection() as conn:
        await jobs.finish(conn, elsewhere, "w1")
    assert (await job_row(rt, job))["status"] == "running"
    await end_leases(rt, [job])
    retaken = await claim(rt, "w1")
    assert [(row.id, row.attempts) for row in retaken.jobs] == [(job, 2)]


async def test_finish_marks_done_on_the_server_of_the_claim(rt: Runtime) -> None:
    job = await add(rt)
    server = (await claim(rt, "w1")).server
    async with rt.db.connection() as conn:
        await jobs.finish(conn, jobs.Finished(server, [job]), "w1")
    assert (await job_row(rt, job))["status"] == "done"


def test_only_job_enqueue_writes_a_job_row() -> None:
    """Every path that enqueues a job, SQL functions included, goes through `job_enqueue()`
    (005_jobs.sql): what a job row holds is written there once."""
    package = Path(jobs.__file__).resolve().parent.parent
    writers = [
        path.relative_to(package).as_posix()
        for path in sorted(package.rglob("*"))
        if path.suffix in {".py", ".sql"}
        and "migrations" not in path.parts
        and re.search(r"INSERT\s+INTO\s+jobs\b", path.read_text(), re.IGNORECASE)
    ]
    assert writers == ["jobs/sql/005_jobs.sql"]
