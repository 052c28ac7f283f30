"""Cash-out throughput against the database's commit rate, and the exactly-once check.

    python bench/cash_out.py [--duration 20] [--connections 64] [--skip-embedded]

1. Baseline: pgbench TPC-B-like (scale 10, 64 clients, 2 threads) on the same server,
   right before the gateway runs: what this machine's PostgreSQL commits per second.
2. POST /api/pix/cash-out at 64 connections (wrk, unique externalIds) against
   `pixgate serve` on a fresh server database, with 1 and with 2 API processes
   (`--workers 2`), with one API process and the jobs in `--job-workers` separate
   `pixgate worker` processes, and against the embedded default (no PIXGATE_DATABASE_URL,
   PIXGATE_DATA_DIR in a temp dir). Each configuration gets a fresh database, `--accounts`
   accounts (10, like TPC-B's 10 branches; requests use their tokens in turn) with a big
   balance and raised limits, a warm-up, then the measurement. One more run puts the whole
   load on a single account: every cash-out then queues on that account's row.
   Throughput is what the gateway sustains: cash-outs accepted per second, and settled per
   second over the same window (a 201 that is settled later is a backlog, not throughput);
   the lower of the two is compared with pgbench, and the backlog left at the end is shown.
3. After each run, once every job has finished: no payouts.settle job exists twice or ran
   twice for one transaction, no transaction has two final-state events, every created
   transaction is final, and `pixgate ledger verify` passes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    CpuMeter,
    CpuShare,
    Deployment,
    LoadResult,
    arguments,
    credentials,
    machine_summary,
    pgbench_tps,
    query,
    running,
    table,
    verdict,
    warmup_seconds,
    wrk,
    wrk_auth_env,
)

THROUGHPUT_TARGET = 0.30  # x pgbench TPC-B TPS
EMBEDDED_TARGET = 0.8  # x the server, one API process
TAIL_TARGET = 4.0  # p99 <= 4 x p50

# Counted after the run; each must be 0 except `transactions` (what was created).
CHECKS = {
    "transactions": "SELECT count(*) FROM transactions WHERE kind = 'cash_out'",
    "not final": "SELECT count(*) FROM transactions WHERE kind = 'cash_out' AND status = 'PENDING'",
    "settle jobs per transaction > 1": """
        SELECT count(*) FROM (SELECT args->>'transaction_id' FROM jobs
                              WHERE kind = 'payouts.settle' GROUP BY 1 HAVING count(*) > 1) d""",
    "settle jobs run more than once": """
        SELECT count(*) FROM jobs WHERE kind = 'payouts.settle' AND attempts > 1""",
    "settle jobs not done": """
        SELECT count(*) FROM jobs WHERE kind = 'payouts.settle' AND status <> 'done'""",
    "transactions with > 1 final event": """
        SELECT count(*) FROM (SELECT transaction_id FROM events WHERE type = 'cash_out'
                              GROUP BY 1 HAVING count(*) > 1) d""",
    "transactions without a settle job": """
        SELECT count(*) FROM transactions t WHERE kind = 'cash_out' AND NOT EXISTS (
            SELECT 1 FROM jobs j WHERE j.kind = 'payouts.settle'
                                   AND j.args->>'transaction_id' = t.id::text)""",
}


SETTLED = "SELECT count(*) FROM transactions WHERE kind = 'cash_out' AND status <> 'PENDING'"
UNSETTLED = "SELECT count(*) FROM transactions WHERE kind = 'cash_out' AND status = 'PENDING'"


@dataclass
class Run:
    label: str
    result: LoadResult
    cpu: CpuShare
    checks: dict[str, int]
    ledger_ok: bool
    settled_per_s: float
    unsettled_at_end: int

    @property
    def sustained(self) -> float:
        return min(self.result.rps, self.settled_per_s)


def wait_for_jobs(url: str, timeout: float = 180.0) -> None:
    """Settlement runs after the response: let the workers finish before counting."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = asyncio.run(
            query(url, "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')")
        )
        if rows[0][0] == 0:
            return
        time.sleep(0.5)
    print(f"warning: jobs still pending after {timeout:.0f} s")


def measure(
    args: argparse.Namespace,
    deployment: Deployment,
    label: str,
    workers: int,
    accounts: int,
    job_workers: int = 0,
) -> Run:
    try:
        deployment.upgrade()
        created = [deployment.account() for _ in range(accounts)]
        with running(deployment, workers=workers, job_workers=job_workers) as gateway:
            creds = [credentials(gateway.base, account) for account in created]
            env = wrk_auth_env(creds) | {"BENCH_MODE": "cash-out"}
            url = gateway.base + "/api/pix/cash-out"
            wrk(
                url,
                "wrk.lua",
                duration=warmup_seconds(args),
                connections=args.connections,
                threads=args.threads,
                env=env | {"BENCH_RUN": "warmup"},
            )
            sql_url = deployment.sql_url()
            settled_before = asyncio.run(query(sql_url, SETTLED))[0][0]
            with CpuMeter(gateway) as meter:
                result = wrk(
                    url,
                    "wrk.lua",
                    duration=args.duration,
                    connections=args.connections,
                    threads=args.threads,
                    env=env | {"BENCH_RUN": "measure"},
                )
            settled = asyncio.run(query(sql_url, SETTLED))[0][0] - settled_before
            unsettled = asyncio.run(query(sql_url, UNSETTLED))[0][0]
            wait_for_jobs(sql_url)
            checks = {name: asyncio.run(query(sql_url, sql))[0][0] for name, sql in CHECKS.items()}
            try:
                deployment.cli("ledger", "verify")
                ledger_ok = True
            except RuntimeError as exc:
                print(exc)
                ledger_ok = False
    finally:
        deployment.cleanup(args.server, keep=args.keep)
    return Run(
        label,
        result,
        meter.share,
        checks,
        ledger_ok,
        settled_per_s=settled / result.seconds if result.seconds else 0.0,
        unsettled_at_end=unsettled,
    )


def main() -> int:
    parser = arguments(__doc__ or "", duration=20)
    parser.add_argument("--skip-embedded", action="store_true", help="server configurations only")
    parser.add_argument("--max-workers", type=int, default=2, help="API processes, 1..N")
    parser.add_argument(
        "--job-workers",
        type=int,
        default=1,
        help="one more run: 1 API process with --no-worker and this many `pixgate worker` "
        "processes (0: skip)",
    )
    parser.add_argument(
        "--accounts",
        type=int,
        default=10,
        help="paying accounts the load is spread over (pgbench's TPC-B has 10 branch rows at "
        "scale 10); one more run on a single account shows the hot-row worst case",
    )
    args = parser.parse_args()
    print(machine_summary(args.server))

    pgbench = pgbench_tps(args.server, scale=10, clients=64, threads=2, duration=args.duration)
    print(
        f"pgbench TPC-B-like, scale 10, 64 clients, 2 threads, {args.duration:g} s: "
        f"{pgbench:,.0f} TPS"
    )

    n = args.accounts
    runs: list[Run] = []
    for workers in range(1, args.max_workers + 1):
        runs.append(
            measure(
                args,
                Deployment.on_server(args.server),
                f"server, {workers} API process(es), {n} accounts",
                workers,
                n,
            )
        )
    if args.job_workers:
        runs.append(
            measure(
                args,
                Deployment.on_server(args.server),
                f"server, 1 API process + {args.job_workers} `pixgate worker`, {n} accounts",
                1,
                n,
                job_workers=args.job_workers,
            )
        )
    if not args.skip_embedded:
        runs.append(
            measure(args, Deployment.embedded(), f"embedded, 1 API process, {n} accounts", 1, n)
        )
    if n > 1:
        runs.append(
            measure(
                args, Deployment.on_server(args.server), "server, 1 API process, 1 account", 1, 1
            )
        )

    print(
        f"\nPOST /api/pix/cash-out, {args.connections} connections, {args.duration:g} s "
        f"(wrk -t{args.threads}); baseline pgbench {pgbench:,.0f} TPS"
    )
    print(
        table(
            [
                "configuration",
                "req/s",
                "settled/s",
                "unsettled at end",
                "p50 ms",
                "p99 ms",
                "p99/p50",
                "non-2xx",
                "x pgbench",
                "cores used",
            ],
            [
                [
                    r.label,
                    r.result.rps,
                    r.settled_per_s,
                    r.unsettled_at_end,
                    r.result.p50_ms,
                    r.result.p99_ms,
                    r.result.p99_ms / max(r.result.p50_ms, 1e-9),
                    r.result.non_2xx + r.result.socket_errors,
                    r.sustained / pgbench,
                    r.cpu.describe(),
                ]
                for r in runs
            ],
        )
    )
    print("\nexactly-once checks after the jobs drained (all 0 except transactions)")
    names = list(CHECKS)
    print(
        table(
            ["configuration", *names, "ledger verify"],
            [
                [r.label, *(r.checks[n] for n in names), "ok" if r.ledger_ok else "FAILED"]
                for r in runs
            ],
        )
    )

    server = runs[0]
    once_ok = all(
        r.ledger_ok and all(v == 0 for k, v in r.checks.items() if k != "transactions")
        for r in runs
    )
    ratio = server.sustained / pgbench
    tail = server.result.p99_ms / max(server.result.p50_ms, 1e-9)
    print(
        f"\ntarget: server cash-out (sustained: min of req/s and settled/s) >= "
        f"{THROUGHPUT_TARGET} x pgbench: {ratio:.2f} -> "
        f"{verdict(ratio >= THROUGHPUT_TARGET)}"
    )
    print(
        f"target: 0 non-2xx: {server.result.non_2xx + server.result.socket_errors} -> "
        f"{verdict(server.result.non_2xx + server.result.socket_errors == 0)}"
    )
    print(f"target: p99 <= {TAIL_TARGET:g} x p50: {tail:.2f} -> {verdict(tail <= TAIL_TARGET)}")
    if not args.skip_embedded:
        embedded_run = next(r for r in runs if r.label.startswith("embedded"))
        embedded = embedded_run.sustained / server.sustained
        print(
            f"target: embedded >= {EMBEDDED_TARGET} x server: {embedded:.2f} -> "
            f"{verdict(embedded >= EMBEDDED_TARGET)}"
        )
    print(
        f"check: no job handled twice, one final event per transaction, ledger balances -> "
        f"{verdict(once_ok)}"
    )
    return 0 if once_ok else 1


if __name__ == "__main__":
    sys.exit(main())
