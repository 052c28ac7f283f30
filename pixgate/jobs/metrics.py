"""What the job workers count: each run of a job, by kind and outcome, and how long its
handler ran (served at /metrics, `core.metrics`)."""

from __future__ import annotations

import time

from prometheus_client import Counter, Histogram

from pixgate.core.metrics import labelled

JOBS_RUN = Counter(
    "pixgate_jobs_run_total",
    "Jobs this process's workers ran, by kind and outcome: done, retry (raised, due again "
    "later) or failed (given up after its attempts)",
    ["kind", "outcome"],
)
JOB_SECONDS = Histogram(
    "pixgate_job_duration_seconds",
    "How long a job's handler ran, by kind",
    ["kind"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


def ran(kind: str, started: float | None, *, final: bool | None = None) -> None:
    """Count one run of a job: `done` (final None), `retry` or `failed` (given up); its
    handler's time since `started` (None: no handler ran, its kind is unknown)."""
    outcome = "done" if final is None else "failed" if final else "retry"
    labelled(JOBS_RUN, kind, outcome).inc()
    if started is not None:
        labelled(JOB_SECONDS, kind).observe(time.perf_counter() - started)
