"""The job worker: woken after commits (core.db.notify), claims due jobs with SKIP LOCKED, runs
them concurrently. A wake-up for jobs due later only moves the worker's next claim earlier:
it claims when something is due, not each time something is enqueued.

A job that raises is retried with exponential backoff and jitter; a job whose worker
died is retaken when its lease expires. Handlers must be idempotent (they re-check
state), because a job can run twice: when a worker dies after the effect but before
marking it done, and when the database fails over in between (a job is marked done only on
the server it was claimed on: `job_rows.Finished`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import socket
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import structlog

from pixgate.core.db.notify import Due, due_from_payload
from pixgate.core.errors import DatabaseUnavailable
from pixgate.jobs import metrics as job_metrics
from pixgate.jobs import queue as job_rows
from pixgate.jobs.queue import DELIVER_WEBHOOK
from pixgate.jobs.registry import HANDLERS
from pixgate.jobs.retry import Retry

if TYPE_CHECKING:
    from pixgate.runtime import Runtime

log = structlog.get_logger(__name__)

# Claiming, finishing and rescheduling are each ONE statement, so they run on a plain
# connection (PostgreSQL makes a single statement its own transaction): one round trip
# instead of BEGIN + statement + COMMIT, on the path of every job. A long-running worker
# marks its finished jobs done in its next claim's statement: no round trip of their own.

IDLE_POLL_SECONDS = 1.0
NEVER = datetime.max.replace(tzinfo=UTC)

# Every claim and finish leaves index entries for dead row versions (no update of a job row
# is HOT), which the claim's bitmap scan visits again until a vacuum removes them. At full
# load thousands of jobs finish between two visits of autovacuum (about once a minute), and
# every claim gets slower with each. So after every VACUUM_EVERY finished jobs a worker
# deletes up to PRUNE_CHUNK done jobs past their retention, then vacuums (about a millisecond
# for that many jobs): claims stay flat and the table stays the size of its retention
# (docs/performance.md, "Job vacuum and retention").
VACUUM_EVERY = 1000
WEBHOOK_SHARE = 0.75
"""Of a worker's job slots, the share webhook deliveries may hold at once."""
PRUNE_CHUNK = 10 * VACUUM_EVERY


def backoff(attempt: int) -> float:
    """5 s, 10 s, 20 s ... capped at 1 h, with +-20 % jitter so retries do not stampede."""
    base = min(5.0 * 2 ** (attempt - 1), 3600.0)
    return float(base * random.uniform(0.8, 1.2))


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


async def run_once(
    rt: Runtime, *, worker: str | None = None, limit: int = 50, kinds: list[str] | None = None
) -> int:
    """Claim and run one batch of due jobs; returns how many ran. Tests drive this directly."""
    name = worker or worker_name()
    async with rt.db.connection() as conn:
        claimed = await job_rows.claim(
            conn,
            worker=name,
            limit=limit,
            lease_seconds=rt.settings.job_lease_seconds,
            kinds=kinds,
        )
    completed = await asyncio.gather(*(_run_one(rt, name, row) for row in claimed.jobs))
    finished = [row.id for row, ok in zip(claimed.jobs, completed, strict=True) if ok]
    if finished:
        async with rt.db.connection() as conn:
            await job_rows.finish(conn, job_rows.Finished(claimed.server, finished), name)
    return len(claimed.jobs)


async def _run_one(rt: Runtime, worker: str, row: job_rows.Job) -> bool:
    """Run one claimed job; True when it completed and is left for the caller to finish."""
    kind, args, attempts = row.kind, row.args, row.attempts
    bound = log.bind(job_id=row.id, kind=kind, attempt=attempts)
    if kind not in HANDLERS:
        async with rt.db.connection() as conn:
            await job_rows.reschedule(
                conn, row.id, worker, delay_seconds=0, error=f"no handler for {kind}", final=True
            )
        bound.error("job.unknown_kind")
        job_metrics.ran("unknown", None, final=True)
        return False
    started = time.perf_counter()
    try:
        await HANDLERS[kind].run(rt, args)
    except Retry as retry:
        job_metrics.ran(kind, started, final=attempts >= row.max_attempts)
        async with rt.db.connection() as conn:
            await job_rows.reschedule(
                conn,
                row.id,
                worker,
                delay_seconds=retry.after,
                error=str(retry),
                final=attempts >= row.max_attempts,
            )
        return False
    except Exception as exc:
        final = attempts >= row.max_attempts
        job_metrics.ran(kind, started, final=final)
        bound.exception("job.failed", final=final)
        async with rt.db.connection() as conn:
            await job_rows.reschedule(
                conn,
                row.id,
                worker,
                delay_seconds=backoff(attempts),
                error=f"{type(exc).__name__}: {exc}",
                final=final,
            )
        return False
    job_metrics.ran(kind, started)
    return True


class Worker:
    """A long-running loop; several run side by side in one or many processes."""

    def __init__(
        self, rt: Runtime, *, concurrency: int | None = None, vacuum_every: int = VACUUM_EVERY
    ) -> None:
        self.rt = rt
        self.name = worker_name()
        self.concurrency = concurrency or rt.settings.job_concurrency
        self.vacuum_every = vacuum_every
        self._wake = asyncio.Event()
        self._claim_now = False
        self._claim_by = NEVER
        """When jobs finished since the last claim began are to be marked done at the latest."""
        self._due_heard = NEVER
        """The earliest due time heard since the last claim began."""
        self._stopping = asyncio.Event()
        self._finished: list[int] = []
        """Jobs completed since the last claim, all claimed on `_server`."""
        self._server: datetime | None = None
        """The server of the last claim (`job_rows.Claimed.server`)."""
        self._finished_since_upkeep = 0
        self._upkeep: asyncio.Task[None] | None = None
        self._running: dict[asyncio.Task[None], int] = {}
        self._webhooks: set[asyncio.Task[None]] = set()
        self.webhook_slots = max(1, int(self.concurrency * WEBHOOK_SHARE))
        self._other_kinds: list[str] = []

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()

    async def run(self) -> None:
        """Claim and run jobs until stopped. The database going away does not end the loop:
        it tries again every IDLE_POLL_SECONDS, and jobs it was running come back to some
        worker when their lease expires."""
        self._other_kinds = sorted(set(HANDLERS) - {DELIVER_WEBHOOK.name})
        inflight: set[asyncio.Task[None]] = set()
        self.rt.db.notifier.listen_locally(job_rows.CHANNEL, self._on_notify)
        log.info("worker.started", worker=self.name)
        try:
            while not self._stopping.is_set():
                try:
                    await self._serve(inflight)
                except DatabaseUnavailable as exc:
                    log.warning("worker.database_unavailable", error=repr(exc))
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stopping.wait(), IDLE_POLL_SECONDS)
            await self._wind_down(inflight)
        finally:
            self.rt.db.notifier.unlisten_locally(job_rows.CHANNEL, self._on_notify)
            log.info("worker.stopped", worker=self.name)

    async def _serve(self, inflight: set[asyncio.Task[None]]) -> None:
        """The loop on one listening connection: until stopped, or until that connection is
        lost (the caller then takes another)."""
        async with self.rt.db.listening(job_rows.CHANNEL, self._on_notify_payload) as listening:
            while not self._stopping.is_set() and listening():
                # what is heard from here on comes after the claim's snapshot may have been taken
                self._claim_now = False
                self._claim_by = NEVER
                self._due_heard = NEVER
                free = self.concurrency - len(inflight)
                next_at = None
                if free > 0:
                    filled, next_at = await self._claim_for(inflight, free)
                    if filled:
                        continue  # there may be more due: claim again at once
                await self._sleep_until(next_at)

    async def _wind_down(self, inflight: set[asyncio.Task[None]]) -> None:
        """Let running jobs finish within the shutdown grace; the ones still running then are
        cancelled and given back, due at once, for another worker (their handlers re-check
        state). Without the database, their leases give them back instead."""
        pending: set[asyncio.Task[None]] = set()
        if inflight:
            _, pending = await asyncio.wait(inflight, timeout=self.rt.settings.shutdown_grace_s)
        interrupted = [self._running[task] for task in pending if task in self._running]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if self._upkeep is not None:
            await asyncio.gather(self._upkeep, return_exceptions=True)
        try:
            async with self.rt.db.connection() as conn:
                finished = self._as_finished(self._finished)
                if finished is not None:
                    await job_rows.finish(conn, finished, self.name)
                if interrupted:
                    await job_rows.release(conn, interrupted, self.name)
        except DatabaseUnavailable as exc:
            log.warning("worker.stop_unrecorded", error=repr(exc), interrupted=interrupted)
        if interrupted:
            log.warning("worker.jobs_interrupted", job_ids=interrupted)

    async def _claim_for(
        self, inflight: set[asyncio.Task[None]], free: int
    ) -> tuple[bool, datetime | None]:
        """Fill `free` slots; whether every slot asked for was filled, and when the next job
        not due yet falls due.

        Webhook deliveries never hold more than `webhook_slots`: deliveries to receivers that
        hang wait out their timeouts, and without a bound enough of them would leave no slot
        for settlements. While none is running, or while they have room for every free slot,
        one claim of any kind (the usual case), of at most what their share leaves; else
        other kinds first, then deliveries up to what is left of their share."""
        room = self.webhook_slots - len(self._webhooks)
        if room >= free or not self._webhooks:
            limit = min(free, room)
            claimed = await self._claim_into(inflight, limit, kinds=None)
            return len(claimed.jobs) == limit, claimed.next_at
        others = await self._claim_into(inflight, free, kinds=self._other_kinds)
        room = min(room, free - len(others.jobs))
        if room <= 0:
            return len(others.jobs) == free, others.next_at
        deliveries = await self._claim_into(inflight, room, kinds=[DELIVER_WEBHOOK.name])
        due = [at for at in (others.next_at, deliveries.next_at) if at is not None]
        return len(deliveries.jobs) == room, min(due, default=None)

    async def _claim_into(
        self, inflight: set[asyncio.Task[None]], free: int, *, kinds: list[str] | None
    ) -> job_rows.Claimed:
        """Start up to `free` jobs, marking the ones finished since the last claim done; each
        finished job wakes the loop to claim the next.

        The server that acknowledged a finished job's work may be gone with it (a standby
        promoted without its last commits), so the claim marks it done only if it runs on the
        server the job was claimed on (`job_rows.Finished`), and when the database cannot be
        reached the finished jobs are forgotten. Either way they stay `running` until their
        lease ends and run again; their handlers re-check state, so work that did survive is
        not done twice."""
        finished, self._finished = self._finished, []
        try:
            async with self.rt.db.connection() as conn:
                claimed = await job_rows.claim(
                    conn,
                    worker=self.name,
                    limit=free,
                    lease_seconds=self.rt.settings.job_lease_seconds,
                    kinds=kinds,
                    finished=self._as_finished(finished),
                )
        except DatabaseUnavailable:
            raise
        except BaseException:
            self._finished.extend(finished)
            raise
        if claimed.server != self._server:
            self._finished = []  # completed meanwhile, claimed on the last server
            self._server = claimed.server
        self._count_finished(len(finished))
        for row in claimed.jobs:
            task = asyncio.create_task(self._run(row, claimed.server))
            self._running[task] = row.id
            if row.kind == DELIVER_WEBHOOK.name:
                self._webhooks.add(task)
            inflight.add(task)
            task.add_done_callback(self._on_done(inflight))
        return claimed

    def _count_finished(self, count: int) -> None:
        """Start the jobs table's upkeep (retention, then vacuum) beside the loop, once
        enough jobs were marked done since the last one."""
        self._finished_since_upkeep += count
        if self._finished_since_upkeep < self.vacuum_every:
            return
        if self._upkeep is None or self._upkeep.done():
            self._finished_since_upkeep = 0
            self._upkeep = asyncio.create_task(self._keep_jobs_table())

    async def _keep_jobs_table(self) -> None:
        try:
            async with self.rt.db.connection() as conn:
                await job_rows.prune(
                    conn, older_than_seconds=self.rt.settings.job_retention_s, limit=PRUNE_CHUNK
                )
                await job_rows.vacuum(conn)
        except Exception as exc:
            log.warning("worker.upkeep_failed", error=str(exc))

    def _as_finished(self, job_ids: list[int]) -> job_rows.Finished | None:
        if not job_ids or self._server is None:
            return None
        return job_rows.Finished(self._server, job_ids)

    async def _run(self, row: job_rows.Job, server: datetime) -> None:
        """Run a job claimed on `server`; if it completes, it is marked done by a claim on
        that server only: one claimed before a failover stays `running` until its lease ends."""
        try:
            completed = await _run_one(self.rt, self.name, row)
        except DatabaseUnavailable as exc:
            # Not even its failure could be recorded: the lease gives the job back.
            log.warning("job.database_unavailable", job_id=row.id, error=repr(exc))
            return
        if completed and server == self._server:
            self._finished.append(row.id)

    def _on_done(self, inflight: set[asyncio.Task[None]]) -> Callable[[asyncio.Task[None]], None]:
        def done(task: asyncio.Task[None]) -> None:
            inflight.discard(task)
            self._running.pop(task, None)
            self._webhooks.discard(task)
            # marked done by a claim on the server that took its work (_claim_into), within
            # the window, with the jobs that finish meanwhile (a failover in between only
            # makes them run again); the last job running waits it too, so that its claim
            # takes the jobs falling due meanwhile together rather than the first few alone
            self._claim_soon()

        return done

    def _claim_soon(self) -> None:
        by = datetime.now(UTC) + timedelta(milliseconds=self.rt.settings.job_window_ms)
        if by < self._claim_by:
            self._claim_by = by
            self._wake.set()

    def _claim(self) -> None:
        self._claim_now = True
        self._wake.set()

    def _on_notify(self, due: Due) -> None:
        """A commit enqueued jobs due at `due` (None: now)."""
        if due is None or due <= datetime.now(UTC):
            self._claim()
        elif due < self._due_heard:
            self._due_heard = due
            self._wake.set()  # to sleep again, until then at the latest

    def _on_notify_payload(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        """A NOTIFY from any process (this one's too), due time in its payload."""
        try:
            due = due_from_payload(payload)
        except ValueError:
            due = None
        self._on_notify(due)

    async def _sleep_until(self, next_at: datetime | None) -> None:
        """Until there is something to claim (a commit that enqueued a job due now), the next
        job not due yet becomes due (as the last claim or a later wake-up told) and the window
        after it has passed, finished jobs (the last one running too) have waited the window
        to be marked done, or the poll interval has passed (leases that expire).

        The window (`job_window_ms`) is what lets jobs that fall due one by one go
        together: at 500 cash-outs a second, a settlement falls due every 2 ms, and
        each claimed alone costs a claim, its reads, its settlement and the claim that marks
        it done, each a round trip and a commit; claimed 10 ms late, five share them."""
        poll_at = datetime.now(UTC) + timedelta(seconds=IDLE_POLL_SECONDS)
        window = timedelta(milliseconds=self.rt.settings.job_window_ms)
        while not self._claim_now and not self._stopping.is_set():
            due_at = min(self._due_heard, next_at or NEVER)
            wake_at = min(poll_at, self._claim_by, due_at + window if due_at < NEVER else NEVER)
            timeout = (wake_at - datetime.now(UTC)).total_seconds()
            if timeout <= 0:
                return
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                return
