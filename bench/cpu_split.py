"""Where the API process's CPU per cash-out goes: the application, the cash-out's settlement
job, and the HTTP server and sockets around them.

    python bench/cpu_split.py [--duration 15] [--requests 12800] [--connections 64]

A throughput bench says how many cash-outs the API process carries; this one says what each
costs it, part by part, so that an optimisation is aimed before it is written.

1. Through HTTP, as `bench/cash_out.py` runs one account (the gateway as shipped, one API
   process with its in-process job worker, wrk with two threads): the API process's CPU per
   cash-out, its settlement included; then `GET /healthz` on a gateway of the same
   configuration, a route of no work of its own.
2. In-process, on a fresh server database: the ASGI application called directly by
   `--connections` concurrent callers (no HTTP server; on every request a token and the
   client certificate header, as through HTTP), `--requests` cash-outs on one account (its
   limits raised out of the way, as `bench/instructions.py` makes it), CPU
   per cash-out; then the settlement jobs those cash-outs queued, run by the job worker in
   the same process, CPU per settlement; then `GET /healthz` the same way.

CPU is `time.process_time()` (user and system) of the process doing the work: the API
process's through HTTP (`_common.CpuMeter`), this process's in-process. The in-process
figures include the callers' own work (building each body, about 0.015 ms on the machine
of docs/performance.md), and the settlement figure the worker loop's waits and this bench's
poll of the jobs left (one query every 10 ms). What uvicorn and the sockets cost is the HTTP
figure less the two in-process ones; healthz's two figures give it a second time. Called one
at a time instead of concurrently, a cash-out costs the application several times as much:
each statement goes alone, and the event loop polls between requests. No target: the split
of a measured figure, for docs/performance.md ("Where the API process's CPU goes").
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cash_out
from _common import (
    CpuMeter,
    Deployment,
    arguments,
    create_database,
    drop_database,
    machine_summary,
    running,
    table,
    warmup_seconds,
    wrk,
)
from instructions import bench_account, operation_call

ONE_ACCOUNT = cash_out.Setup("server, 1 API process, 1 account", workers=1, accounts=1)
POLL_SECONDS = 0.01


@dataclass(frozen=True)
class InProcess:
    """CPU ms per request of the application called in-process, and per settlement job."""

    cash_out: float
    settlement: float
    healthz: float


def through_http(args: argparse.Namespace) -> tuple[float, float]:
    """The API process's CPU ms per cash-out (one account, as shipped), and per healthz."""
    run = cash_out.measure(args, ONE_ACCOUNT)
    if not run.once_ok:
        raise SystemExit(f"{run.label}: an exactly-once check or the ledger failed: {run.checks}")
    per_cash_out = 1000 * run.cpu.api / run.result.rps
    deployment = Deployment.on_server(args.server)
    try:
        deployment.upgrade()
        with running(deployment, workers=1) as gateway:
            load = {"connections": args.connections, "threads": 2}
            wrk(gateway.base + "/healthz", "wrk.lua", duration=warmup_seconds(args), **load)
            with CpuMeter(gateway) as meter:
                result = wrk(gateway.base + "/healthz", "wrk.lua", duration=args.duration, **load)
    finally:
        deployment.cleanup(args.server, keep=args.keep)
    return per_cash_out, 1000 * meter.share.api / result.rps


async def _concurrently(call: Callable[[], Awaitable[None]], callers: int, each: int) -> float:
    """CPU ms per call of `callers` callers making `each` calls apiece."""

    async def caller() -> None:
        for _ in range(each):
            await call()

    started = time.process_time()
    await asyncio.gather(*(caller() for _ in range(callers)))
    return 1000 * (time.process_time() - started) / (callers * each)


async def _settle_all(rt: Any, settled: int) -> float:
    """CPU ms per job of the worker running every job queued, `settled` of them."""
    from pixgate.jobs.worker import Worker

    async def left() -> int:
        async with rt.db.connection() as conn:
            count: int = await conn.fetchval(
                "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
            )
            return count

    worker = Worker(rt)
    started = time.process_time()
    running_worker = asyncio.create_task(worker.run())
    while await left():  # noqa: ASYNC110 - the state is in the database
        await asyncio.sleep(POLL_SECONDS)
    spent = time.process_time() - started
    worker.stop()
    await running_worker
    return 1000 * spent / settled


async def _in_process(url: str, account: dict[str, str], args: argparse.Namespace) -> InProcess:
    from pixgate.app import create_app
    from pixgate.core.logging import configure
    from pixgate.core.settings import Settings
    from pixgate.gc_tuning import tune_for_serving
    from pixgate.runtime import build_runtime

    # due at once, but run only when the worker starts: the requests pay none of it
    settings = Settings(database_url=url, settlement_delay_ms=0)
    configure(json=True, level="WARNING")
    callers = args.connections
    each = max(1, args.requests // callers)
    async with build_runtime(settings, url) as rt:
        app = create_app(settings, runtime=rt)  # no lifespan: no worker, no revocation poll
        tune_for_serving()
        post = await operation_call(app, rt, account, "POST /api/pix/cash-out")
        healthz = await operation_call(app, rt, account, "GET /healthz")
        warm = max(1, each // 10)
        await _concurrently(post, callers, warm)
        await _settle_all(rt, callers * warm)
        per_cash_out = await _concurrently(post, callers, each)
        per_settlement = await _settle_all(rt, callers * each)
        await _concurrently(healthz, callers, each)  # warm-up
        per_healthz = await _concurrently(healthz, callers, each)
    return InProcess(per_cash_out, per_settlement, per_healthz)


def in_process(args: argparse.Namespace) -> InProcess:
    from pixgate.core.db import migrate

    url = create_database(args.server, prefix="pixgate_cpu_split")
    try:
        migrate.upgrade(url)
        account = asyncio.run(bench_account(url))
        import uvloop

        uvloop.install()  # as `pixgate serve` runs
        return asyncio.run(_in_process(url, account, args))
    finally:
        drop_database(args.server, url)


def main() -> int:
    parser = arguments(__doc__ or "", duration=15)
    parser.add_argument(
        "--requests", type=int, default=12800, help="cash-outs (and healthz) in-process"
    )
    args = parser.parse_args()
    print(machine_summary(args.server))
    http_cash_out, http_healthz = through_http(args)
    inner = in_process(args)
    rest = http_cash_out - inner.cash_out - inner.settlement

    def row(part: str, ms: float) -> list[str]:
        return [part, f"{ms:.3f}", f"{ms / http_cash_out:.0%}"]

    print(
        f"\nCPU ms per cash-out of the API process, one account, {args.connections} connections "
        f"(in-process: {args.connections} concurrent callers, {args.requests:,} requests)"
    )
    rows = [
        row("the API process through HTTP (the cash-out and its settlement)", http_cash_out),
        row("the application, in-process", inner.cash_out),
        row("its settlement job, in-process", inner.settlement),
        row("uvicorn and the sockets (the rest)", rest),
    ]
    print(table(["part", "CPU ms", "share"], rows))
    print(
        f"\nGET /healthz: {http_healthz:.3f} ms through HTTP, {inner.healthz:.3f} ms in-process; "
        f"uvicorn and the sockets {http_healthz - inner.healthz:.3f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
