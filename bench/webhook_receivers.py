"""Slow and failing webhook receivers: do they slow the API, or other accounts' webhooks?

    python bench/webhook_receivers.py [--rate 200] [--accounts 4] [--duration 20]
                                      [--runs healthy,hangs,500]

Three runs (`--runs` picks them and their order), each on a fresh server database with
its own `pixgate serve` (the jobs run in the API process unless `--job-workers N`),
`--accounts` accounts and cash-outs at a fixed rate (open loop, the accounts in turn):

1. `healthy`: every account's `cash_out` webhooks go to a receiver that answers 204 at once;
2. `one hangs`: the first account's go to a receiver that reads each POST and never
   answers (each attempt ends at PIXGATE_WEBHOOK_TIMEOUT_S, 10 s), the others' to the
   healthy receiver;
3. `one answers 500`: the first account's go to a receiver that answers 500 at once.

Per run: cash-out latency p50/p99 as the client saw it, and its ratio to the healthy run's;
commit -> arrival of the webhooks at the healthy receiver (the other accounts'), p50/p99;
cash-out creation -> settlement commit (the settlement jobs share the worker with the
deliveries); what the bad receiver's deliveries became; and deliveries lost, which must be
0: a final cash-out without its event or a delivery per URL, a pending delivery without a
job to retry it, a delivery failed, or one marked delivered that the healthy receiver never
got. The bench exits non-zero if any is lost; it prints timings and never asserts them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    CpuMeter,
    CpuShare,
    Credentials,
    Deployment,
    arguments,
    cash_out_body,
    credentials,
    free_port,
    machine_summary,
    query,
    running,
    start_receiver,
    table,
    warmup_seconds,
)

SCENARIOS: dict[str, tuple[str, list[str] | None]] = {
    "healthy": ("healthy", None),
    "hangs": ("one hangs", ["--hang"]),
    "500": ("one answers 500", ["--status", "500"]),
}
"""Each run's name and bad receiver (`bench/_receiver.py` options; None: all healthy)."""

LOST = {
    "final cash-out without its event": """
        SELECT count(*) FROM transactions t
        WHERE t.kind = 'cash_out' AND t.status <> 'PENDING'
          AND NOT EXISTS (SELECT 1 FROM events e WHERE e.transaction_id = t.id)""",
    "event without a delivery per URL": """
        SELECT count(*) FROM events e
        WHERE e.type = 'cash_out' AND (SELECT count(*) FROM webhook_deliveries d
                                      WHERE d.event_id = e.id) <> 1""",
    "pending delivery without a job": """
        SELECT count(*) FROM webhook_deliveries d
        WHERE d.status = 'pending' AND NOT EXISTS (
            SELECT 1 FROM jobs j WHERE j.kind = 'webhook.deliver'
              AND (j.args->>'delivery_id')::bigint = d.id AND j.status IN ('queued', 'running'))""",
    "delivery failed": "SELECT count(*) FROM webhook_deliveries WHERE status = 'failed'",
}

DELIVERIES = """
    SELECT d.message_id, d.url, d.status,
           extract(epoch FROM d.created_at)::float8 AS committed,
           extract(epoch FROM t.created_at)::float8 AS created
    FROM webhook_deliveries d
    JOIN events e ON e.id = d.event_id
    JOIN transactions t ON t.id = e.transaction_id
"""

BAD_ATTEMPTS = """
    SELECT CASE WHEN a.error LIKE 'timed out%' THEN 'timed out'
                WHEN a.error LIKE 'not sent%' THEN 'not sent'
                WHEN a.status_code IS NOT NULL THEN a.status_code::text
                ELSE 'other error' END AS outcome,
           count(*) AS n
    FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
    WHERE d.url = $1 GROUP BY 1 ORDER BY 1
"""


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Run:
    name: str
    sent: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    healthy_ms: list[float] = field(default_factory=list)
    settle_ms: list[float] = field(default_factory=list)
    deliveries: dict[str, int] = field(default_factory=dict)
    bad_attempts: dict[str, int] = field(default_factory=dict)
    lost: dict[str, int] = field(default_factory=dict)
    cpu: CpuShare = field(default_factory=lambda: CpuShare(0.0, 0.0, 0.0))
    load: float = 0.0
    """The machine's 1-minute load average when the run began (others' work included)."""


async def open_loop(
    base: str, creds: list[Credentials], rate: float, duration: float, run: Run | None
) -> None:
    """POST at fixed times t0 + i/rate, never waiting for answers before the next; each
    request's latency (from its scheduled start) and status go into `run`."""
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:

        async def one(cred: Credentials, due: float) -> None:
            try:
                response = await client.post(
                    "/api/pix/cash-out", json=cash_out_body("wr"), headers=cred.headers()
                )
                status = response.status_code
            except httpx.HTTPError:
                status = 0
            if run is not None:
                run.latencies_ms.append((time.monotonic() - due) * 1000)
                run.statuses[status] = run.statuses.get(status, 0) + 1

        tasks = []
        start = time.monotonic()
        for i in range(int(rate * duration)):
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(creds[i % len(creds)], due)))
        await asyncio.gather(*tasks)


def stop(processes: list[subprocess.Popen[str]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def settle(url: str, healthy_hook: str, timeout: float = 60.0) -> None:
    """Until every cash-out is final and every delivery to the healthy receiver is done
    (the bad receiver's stay pending: they are retried on the schedule)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = asyncio.run(
            query(
                url,
                "SELECT (SELECT count(*) FROM transactions WHERE kind = 'cash_out' "
                "AND status = 'PENDING') + (SELECT count(*) FROM webhook_deliveries "
                "WHERE url = $1 AND status = 'pending')",
                healthy_hook,
            )
        )[0][0]
        if left == 0:
            return
        time.sleep(0.5)


def measure(args: argparse.Namespace, name: str, bad_options: list[str] | None) -> Run:
    run = Run(name)
    deployment = Deployment.on_server(
        args.server,
        allow_insecure_webhooks="true",
        db_pool_max=str(args.pool),
    )
    healthy_path = deployment.workdir / "healthy.jsonl"
    healthy_port, bad_port = free_port(), free_port()
    healthy_hook = f"http://127.0.0.1:{healthy_port}/hook"
    bad_hook = f"http://127.0.0.1:{bad_port}/hook"
    receivers = [start_receiver(healthy_port, healthy_path)]
    if bad_options is not None:
        receivers.append(start_receiver(bad_port, deployment.workdir / "bad.jsonl", bad_options))
    try:
        deployment.upgrade()
        accounts = deployment.accounts(args.accounts)
        for n, account in enumerate(accounts):
            hook = bad_hook if n == 0 and bad_options is not None else healthy_hook
            deployment.cli(
                "webhooks",
                "add",
                "--account",
                str(account["accountId"]),
                "--event",
                "cash_out",
                "--url",
                hook,
            )
        rate, duration = args.rate, args.duration
        with running(deployment, job_workers=args.job_workers) as gateway:
            creds = [credentials(gateway.base, account) for account in accounts]
            asyncio.run(open_loop(gateway.base, creds, rate, warmup_seconds(args), None))
            measured_from = time.time()
            run.load = os.getloadavg()[0]
            with CpuMeter(gateway) as meter:
                asyncio.run(open_loop(gateway.base, creds, rate, duration, run))
            run.cpu = meter.share
            settle(deployment.sql_url(), healthy_hook)
            url = deployment.sql_url()
            rows = asyncio.run(query(url, DELIVERIES))
            for check, sql in LOST.items():
                run.lost[check] = asyncio.run(query(url, sql))[0][0]
            run.bad_attempts = {
                r["outcome"]: r["n"] for r in asyncio.run(query(url, BAD_ATTEMPTS, bad_hook))
            }
            stop(receivers[1:])  # the gateway's shutdown need not wait for hanging POSTs
    finally:
        stop(receivers)
    try:
        arrived: dict[str, float] = {}
        for line in healthy_path.read_text().splitlines():
            record = json.loads(line)
            arrived.setdefault(record["id"], record["at"])
        never_arrived = 0
        for row in rows:
            key = f"{'bad' if row['url'] == bad_hook else 'healthy'} {row['status']}"
            run.deliveries[key] = run.deliveries.get(key, 0) + 1
            if row["url"] == bad_hook:
                continue
            at = arrived.get(row["message_id"])
            if row["status"] == "delivered" and at is None:
                never_arrived += 1
            if at is not None and row["created"] >= measured_from:
                run.healthy_ms.append((at - row["committed"]) * 1000)
            if row["created"] >= measured_from:
                run.settle_ms.append((row["committed"] - row["created"]) * 1000)
        run.lost["delivered, never arrived"] = never_arrived
        run.sent = sum(run.statuses.values())
    finally:
        deployment.cleanup(args.server, keep=args.keep)
    return run


def main() -> int:
    parser = arguments(__doc__ or "", duration=20)
    parser.add_argument("--rate", type=float, default=200.0, help="cash-outs per second")
    parser.add_argument("--accounts", type=int, default=4, help="accounts (the first is bad)")
    parser.add_argument(
        "--job-workers",
        type=int,
        default=0,
        help="`pixgate worker` processes for the jobs (0: the API process runs them)",
    )
    parser.add_argument(
        "--pool", type=int, default=10, help="PIXGATE_DB_POOL_MAX of each gateway process"
    )
    parser.add_argument(
        "--runs",
        default="healthy,hangs,500",
        help=f"the runs, in order, from {','.join(SCENARIOS)} (a name may repeat)",
    )
    args = parser.parse_args()
    print(machine_summary(args.server))
    runs = [measure(args, *SCENARIOS[key]) for key in args.runs.split(",")]
    base = next((run for run in runs if run.name == "healthy"), runs[0])
    ratio = f"p99 / {base.name} run's"

    print(
        f"\ncash-outs at {args.rate:g}/s over {args.accounts} accounts for {args.duration:g} s "
        "per run; in the bad runs the first account's webhooks go to the bad receiver"
    )
    rows = []
    for run in runs:
        p50, p99 = percentile(run.latencies_ms, 0.5), percentile(run.latencies_ms, 0.99)
        rows.append(
            [
                run.name,
                run.sent,
                " ".join(f"{k}:{v}" for k, v in sorted(run.statuses.items())),
                p50,
                p99,
                p99 / percentile(base.latencies_ms, 0.99),
                percentile(run.healthy_ms, 0.5),
                percentile(run.healthy_ms, 0.99),
                percentile(run.settle_ms, 0.99),
                sum(run.lost.values()),
                f"{run.cpu.api:.2f} / {run.cpu.database:.2f}",
                run.load,
            ]
        )
    print(
        table(
            [
                "receivers",
                "cash-outs",
                "statuses",
                "p50 ms",
                "p99 ms",
                ratio,
                "healthy webhooks p50 ms",
                "p99 ms",
                "created -> settled p99 ms",
                "lost",
                "cores: API / PostgreSQL",
                "load avg",
            ],
            rows,
        )
    )
    print("\nwebhook deliveries and the bad receiver's attempts, per run")
    print(
        table(
            ["receivers", "deliveries", "bad receiver's attempts", "healthy webhooks measured"],
            [
                [
                    run.name,
                    ", ".join(f"{k}: {v}" for k, v in sorted(run.deliveries.items())),
                    ", ".join(f"{k}: {v}" for k, v in run.bad_attempts.items()) or "-",
                    len(run.healthy_ms),
                ]
                for run in runs
            ],
        )
    )
    lost = {f"{run.name}: {k}": v for run in runs for k, v in run.lost.items() if v}
    print(f"\ndeliveries lost: {sum(lost.values())} {lost or ''}".rstrip())
    measured = all(run.latencies_ms and run.healthy_ms for run in runs)
    return 0 if not lost and measured else 1


if __name__ == "__main__":
    sys.exit(main())
