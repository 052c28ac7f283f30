"""Job rows: enqueued inside the caller's transaction (the outbox), claimed with SKIP LOCKED."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pixgate.core.db.notify import notify_after_commit
from pixgate.core.db.pool import Connection

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

A = TypeVar("A", bound="DataclassInstance")

CHANNEL = "pixgate_jobs"


class JobStatus(StrEnum):
    """`jobs.status`: `queued` (due at `run_at`), `running` (leased to a worker), `done`, or
    `failed` (given up after `max_attempts`).

    The queries of this module spell these values as SQL literals, never as parameters: a
    generic plan of a prepared statement (asyncpg prepares them all) can use the partial
    indexes (`ix_jobs_queued_run_at`, `ix_jobs_running_locked_until`,
    `ix_jobs_done_finished_at`) only when the status in its predicate is a constant.
    `tests/core/db/test_enums.py` checks the literals and the CHECK constraint against this enum.
    """

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class JobKind(Generic[A]):
    """A kind of job, declared once here: its name, the frozen dataclass of its arguments,
    and after how many attempts a job that keeps failing is given up. The services and the
    SQL functions enqueue it, `pixgate.jobs.registry` binds its handler.

    `jobs.args` holds the dataclass's fields by name, as JSON values, so a row's args
    construct it as they are (`kind.args(**row.args)`): a field is renamed only with a
    migration of the rows already queued. `tests/jobs/test_kinds.py` checks that the
    arguments every SQL function builds are exactly the fields."""

    name: str
    args: type[A]
    max_attempts: int = 25


@dataclass(frozen=True, slots=True)
class SettlePayout:
    """`payouts.settle`: built by the payout and refund holds (040_payouts.sql,
    050_refunds.sql)."""

    transaction_id: int


@dataclass(frozen=True, slots=True)
class ExpireCharge:
    """`charges.expire`: enqueued with each charge, due at its expiration."""

    charge_id: int


@dataclass(frozen=True, slots=True)
class RunDueSplits:
    """`splits.run_due`: the account's deferred splits due by `due_by` (ISO 8601)."""

    account_id: int
    due_by: str


@dataclass(frozen=True, slots=True)
class DeliverWebhook:
    """`webhook.deliver`: built by `record_event()` (030_events.sql), one per delivery."""

    delivery_id: int


SETTLE_PAYOUT = JobKind("payouts.settle", SettlePayout, max_attempts=30)
EXPIRE_CHARGE = JobKind("charges.expire", ExpireCharge, max_attempts=30)
RUN_DUE_SPLITS = JobKind("splits.run_due", RunDueSplits)
DELIVER_WEBHOOK = JobKind("webhook.deliver", DeliverWebhook, max_attempts=1000)
"""The handler itself decides when a delivery has failed (after the retry window); this
bound only stops a handler that keeps crashing."""


async def enqueue(
    conn: Connection, kind: JobKind[A], args: A, *, run_at: datetime | None = None
) -> int:
    """Insert a job in the caller's transaction (`job_enqueue()`, 005_jobs.sql); the workers
    are woken when it commits."""
    job_id: int = await conn.fetchval(
        "SELECT job_enqueue($1, $2, $3, $4)",
        kind.name,
        _as_json(args),
        run_at,
        kind.max_attempts,
    )
    wake_workers(conn, run_at)
    return job_id


def _as_json(args: DataclassInstance) -> dict[str, Any]:
    """A job's `args`: its arguments' fields by name (`asdict` would copy every value)."""
    return {field.name: getattr(args, field.name) for field in fields(args)}


def wake_workers(conn: Connection, due: datetime | None = None) -> None:
    """Wake the job workers once the transaction on `conn` has committed, for jobs due at
    `due` (None: now; else the earliest `run_at` of the jobs enqueued). Every path that
    enqueues a job calls it, those that enqueue through a SQL function too: the function
    cannot NOTIFY (005_jobs.sql)."""
    notify_after_commit(conn, CHANNEL, due)


@dataclass(frozen=True, slots=True)
class Job:
    """A claimed job: what its handler runs with, and how many attempts it has had."""

    id: int
    kind: str
    args: dict[str, Any]
    attempts: int
    max_attempts: int


@dataclass(frozen=True, slots=True)
class Claimed:
    jobs: list[Job]
    next_at: datetime | None
    """When the first queued job that is not due yet becomes due (None: there is none)."""
    server: datetime
    """The server the claim was made on, as its postmaster's start time: another server (a
    standby promoted meanwhile) or the same one restarted shows another."""


@dataclass(frozen=True, slots=True)
class Finished:
    """Jobs whose handlers completed, to be marked done, and the server they were claimed on
    (`Claimed.server`).

    Their work is certain to be held only by that server: a standby promoted after a
    handler's commit may not have received it (asynchronous replication), while it did
    receive the claim. So they are marked done only there (`claim`, `finish`); anywhere else
    they stay `running` until their lease ends, and run again (handlers re-check state)."""

    server: datetime
    job_ids: list[int]


def _claim_sql(kind_filter: str) -> str:
    """The claim statement, with `kind_filter` (SQL text) on the jobs it takes and the next due.

    Two statements, one per filter, rather than one with `($n IS NULL OR kind = ANY($n))`:
    a plan kept for every call cannot simplify that disjunction, so PostgreSQL, finding the
    plan for a known NULL cheaper, planned the statement again on many of its calls (0.6-1.0
    ms each, more than running it) instead of keeping one."""
    return f"""
        WITH done AS (
            UPDATE jobs SET status = 'done', finished_at = now(), locked_until = NULL
            WHERE id = ANY($4::bigint[]) AND locked_by = $1 AND status = 'running'
              AND pg_postmaster_start_time() = $5
        ), claimed AS (
            UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_by = $1,
                            locked_until = now() + make_interval(secs => $3)
            WHERE id IN (
                SELECT id FROM jobs
                WHERE ((status = 'queued' AND run_at <= now())
                       OR (status = 'running' AND locked_until < now()))
                  {kind_filter}
                  AND id <> ALL($4::bigint[])
                ORDER BY run_at
                LIMIT $2
                FOR UPDATE SKIP LOCKED
            )
            RETURNING id, kind, args, attempts, max_attempts
        )
        SELECT id, kind, args, attempts, max_attempts, NULL::timestamptz AS next_at,
               NULL::timestamptz AS server
        FROM claimed
        UNION ALL
        SELECT NULL::bigint, NULL::text, NULL::jsonb, NULL::int, NULL::int,
               (SELECT min(run_at) FROM jobs
                WHERE status = 'queued' AND run_at > now() {kind_filter}),
               pg_postmaster_start_time()
        """  # noqa: S608 - `kind_filter` is one of this module's constants


_CLAIM_ANY = _claim_sql("")
_CLAIM_KINDS = _claim_sql("AND kind = ANY($6::text[])")


async def claim(
    conn: Connection,
    *,
    worker: str,
    limit: int,
    lease_seconds: float,
    kinds: list[str] | None,
    finished: Finished | None = None,
) -> Claimed:
    """Take due jobs, and jobs whose worker's lease expired (that worker died).

    `finished`: this worker's jobs that ran to completion since its last claim, marked done
    in the same statement if it runs on the server they were claimed on, so finishing a job
    costs no round trip of its own. The same statement also tells when the next job not due
    yet will be, so a worker that goes idle knows how long it may sleep without asking again.
    """
    finished_ids = finished.job_ids if finished else []
    finished_on = finished.server if finished else None
    if kinds is None:
        rows = await conn.fetch(_CLAIM_ANY, worker, limit, lease_seconds, finished_ids, finished_on)
    else:
        rows = await conn.fetch(
            _CLAIM_KINDS, worker, limit, lease_seconds, finished_ids, finished_on, kinds
        )
    last = next(row for row in rows if row["id"] is None)
    return Claimed(
        jobs=[
            Job(row["id"], row["kind"], row["args"], row["attempts"], row["max_attempts"])
            for row in rows
            if row["id"] is not None
        ],
        next_at=last["next_at"],
        server=last["server"],
    )


async def finish(conn: Connection, finished: Finished, worker: str) -> None:
    """Mark `finished` done, on the server they were claimed on only (`Finished`)."""
    await conn.execute(
        "UPDATE jobs SET status = 'done', finished_at = now(), locked_until = NULL "
        "WHERE id = ANY($1::bigint[]) AND locked_by = $2 AND status = 'running' "
        "AND pg_postmaster_start_time() = $3",
        finished.job_ids,
        worker,
        finished.server,
    )


async def release(conn: Connection, job_ids: list[int], worker: str) -> None:
    """Give back jobs a stopping worker interrupted: due again at once, and the interrupted
    run does not count as an attempt (it did not fail; its handler re-checks state)."""
    await conn.execute(
        """
        UPDATE jobs SET status = 'queued', run_at = now(), locked_until = NULL,
                        attempts = greatest(attempts - 1, 0), last_error = 'worker stopped'
        WHERE id = ANY($1::bigint[]) AND locked_by = $2 AND status = 'running'
        """,
        job_ids,
        worker,
    )


async def reschedule(
    conn: Connection, job_id: int, worker: str, *, delay_seconds: float, error: str, final: bool
) -> None:
    await conn.execute(
        """
        UPDATE jobs SET status = CASE WHEN $5 THEN 'failed' ELSE 'queued' END,
                        run_at = now() + make_interval(secs => $3), last_error = $4,
                        locked_until = NULL,
                        finished_at = CASE WHEN $5 THEN now() END
        WHERE id = $1 AND locked_by = $2
        """,
        job_id,
        worker,
        delay_seconds,
        error[:2000],
        final,
    )


async def prune(conn: Connection, *, older_than_seconds: float, limit: int) -> int:
    """Delete up to `limit` done jobs finished more than `older_than_seconds` ago, oldest
    first; returns how many went. Failed jobs are kept."""
    deleted: int = await conn.fetchval(
        """
        WITH gone AS (
            DELETE FROM jobs WHERE id IN (
                SELECT id FROM jobs
                WHERE status = 'done' AND finished_at < now() - make_interval(secs => $1)
                ORDER BY finished_at
                LIMIT $2
            )
            RETURNING 1
        )
        SELECT count(*) FROM gone
        """,
        older_than_seconds,
        limit,
    )
    return deleted


async def vacuum(conn: Connection) -> None:
    """Clear the dead row versions that finished jobs leave (no update of a job is HOT: its
    status is in the partial indexes' predicates), so claims do not walk them again. Skipped
    when another vacuum of the table is running."""
    await conn.execute("VACUUM (SKIP_LOCKED) jobs")


@dataclass(frozen=True, slots=True)
class Backlog:
    """One kind's jobs waiting for a worker, as `/metrics` reads them at scrape time."""

    kind: str
    due: int
    """Queued jobs whose time has come (not those scheduled later: a charge's expiry, a
    webhook's next retry)."""
    oldest_due_seconds: float
    """How long the longest-waiting due job has waited past its due time (0: none)."""
    running: int
    """Jobs a worker holds (a worker that died holds them until its lease ends)."""


async def backlog(conn: Connection) -> list[Backlog]:
    """Due and running jobs per kind, in one statement that reads only those rows through
    the two partial indexes (`ix_jobs_queued_run_at`'s range up to now,
    `ix_jobs_running_locked_until`): a healthy queue costs a scrape next to nothing, however
    many done jobs the table keeps and however many jobs are scheduled ahead."""
    rows = await conn.fetch(
        """
        SELECT kind,
               count(*) FILTER (WHERE status = 'queued') AS due,
               coalesce(extract(epoch FROM now() - min(run_at) FILTER (WHERE status = 'queued')),
                        0)::float8 AS oldest,
               count(*) FILTER (WHERE status = 'running') AS running
        FROM (SELECT kind, status, run_at FROM jobs WHERE status = 'queued' AND run_at <= now()
              UNION ALL
              SELECT kind, status, run_at FROM jobs WHERE status = 'running') AS waiting
        GROUP BY kind
        """
    )
    return [Backlog(row["kind"], row["due"], row["oldest"], row["running"]) for row in rows]
