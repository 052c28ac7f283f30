"""Cash-out throughput and latency against the database's commit rate, as a user runs the
gateway, what each shortcut of a tuned harness is worth, and the exactly-once check.

    python bench/cash_out.py [--duration 20] [--connections 64] [--skip-embedded]

1. As a user runs it (the judged configuration): the gateway's shipped settings (the
   sandbox's settlement delay, a new account's default limits), every request with its
   token and the client certificate header as nginx forwards it, wrk with two threads.
   POST /api/pix/cash-out at 64 connections against `pixgate serve` on a fresh server
   database with 1 and 2 API processes (`--workers 2`), with one API process and the jobs
   in `--job-workers` separate `pixgate worker` processes, against the embedded default (no
   PIXGATE_DATABASE_URL, PIXGATE_DATA_DIR in a temp dir; it runs right before each run of
   the judged configuration, and its verdict is the median of the ratios of those pairs),
   and with the whole load on a single account, with 1 and 2 API processes (one merchant
   may run as many API processes as the host has cores: the better of the two runs
   `--repeats` times more, each run followed by the hot-row pgbench, and the one-account
   verdict is the median of those ratios). Each configuration gets a fresh database,
   `--accounts` accounts (10, like TPC-B's 10 branches; requests use their tokens in turn),
   a warm-up, then the measurement.
   Throughput is what the gateway sustains: cash-outs accepted per second, and settled per
   second over the same window (a 201 that is settled later is a backlog, not throughput);
   the lower of the two is compared with pgbench, and the backlog left at the end is shown.
   The judged configuration runs `--repeats` times (3), each run followed by pgbench.
2. Baselines: pgbench TPC-B-like (scale 10, 64 clients, 2 threads) on the same server, once
   before the gateway's runs and after each run of the judged configuration. Each run is
   compared with the pgbench right after it, and the verdict is the median of those ratios:
   this host's pgbench moved by a third within one bench, so a run and a baseline minutes
   apart, or a single run, can say either way. The pgbench after a run is the one a user
   who benchmarks a running gateway's machine would take (the other rows use the median
   of the baselines). The hot-row ceiling (every client updating one row), against which
   the single-account runs are set, is taken the same way: before the one-account repeats
   and after each.
3. What the tuned harness changes, one thing at a time from the judged configuration:
   settlement delay 0, limits raised out of the way, wrk with one thread, and all three;
   and the judged configuration through PgBouncer in transaction mode (Debian's, when
   installed; as many server connections as the API process's pool, so that the difference
   is the pooler's own cost). In `--rounds` rounds (2; 0 skips it) that take the list
   forwards, then backwards. Every measurement and every pgbench starts right after a
   CHECKPOINT, so none pays for an earlier run's writes.
4. Latency at low load: cash-out p50/p99 at 1, 8 and 64 connections beside pgbench TPC-B's
   per-transaction latency at 1, 8 and 64 clients.
5. `--cpus N`: every run as on a host whose CPU is slower for its disk, the bench, the
   gateway, wrk, pgbench and the server's processes sharing N CPUs (bench/_slow_host.py).
6. After each run, once every job has finished: no payouts.settle job exists twice or ran
   twice for one transaction, no transaction has two final-state events, every created
   transaction is final, and `pixgate ledger verify` passes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.pgbouncer

from _common import (
    HOT_ROW,
    CpuMeter,
    CpuShare,
    Deployment,
    Gateway,
    LoadResult,
    Pgbench,
    arguments,
    credentials,
    machine_summary,
    pgbench,
    query,
    running,
    stolen_seconds,
    table,
    verdict,
    wait_for_jobs,
    warmup_seconds,
    wrk,
    wrk_auth_env,
)
from _slow_host import cpu_limit

from pixgate.core.settings import Settings
from tests.pgbouncer import MISSING as PGBOUNCER_MISSING
from tests.pgbouncer import installed as pgbouncer_installed
from tests.pgbouncer import pgbouncer

THROUGHPUT_TARGET = 0.6  # x pgbench TPC-B TPS, as a user runs the gateway
EMBEDDED_TARGET = 0.9  # x the server, one API process
TAIL_TARGET = 4.0  # p99 <= 4 x p50
HOT_ROW_TARGET = 1.0  # one account's cash-outs x the one-row update ceiling
LOW_LOAD_TARGET = 3.0  # at one connection, cash-out p50 <= 3 x TPC-B's
LATENCY_CONNECTIONS = (1, 8, 64)


@dataclass(frozen=True)
class Harness:
    """How a run loads the gateway: its settings, its accounts' limits, wrk's threads."""

    settlement_delay_ms: int
    raised_limits: bool
    wrk_threads: int

    def settings(self) -> dict[str, str]:
        return {"settlement_delay_ms": str(self.settlement_delay_ms)}


AS_SHIPPED = Harness(
    settlement_delay_ms=Settings.model_fields["settlement_delay_ms"].default,
    raised_limits=False,
    wrk_threads=2,
)
"""The gateway as a user runs it: its shipped settings and a new account's limits."""

TUNED_CHANGES: dict[str, dict[str, Any]] = {
    "settlement delay 0": {"settlement_delay_ms": 0},
    "limits raised": {"raised_limits": True},
    "wrk 1 thread": {"wrk_threads": 1},
    "all three (the tuned harness)": {
        "settlement_delay_ms": 0,
        "raised_limits": True,
        "wrk_threads": 1,
    },
}
"""What a harness tuned for the ceiling changes, each measured alone and all together."""

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


SUSPECT_JOBS = """
    SELECT id, status, attempts, locked_by, last_error, created_at, finished_at FROM jobs
    WHERE kind = 'payouts.settle' AND (attempts > 1 OR status <> 'done')
    ORDER BY id LIMIT 10"""
"""For a failed check: the settlement jobs that ran twice or never finished, as they stand."""

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

    @property
    def tail(self) -> float:
        return self.result.p99_ms / max(self.result.p50_ms, 1e-9)

    @property
    def once_ok(self) -> bool:
        return self.ledger_ok and all(v == 0 for k, v in self.checks.items() if k != "transactions")


@dataclass
class Judged:
    """The judged configuration's runs, each followed by pgbench (`after[i]` follows
    `runs[i]`), the pgbench before the first, and a configuration compared with it run right
    before each (`beside[i]` precedes `runs[i]`; none when there is no such configuration)."""

    before: Pgbench
    runs: list[Run]
    after: list[Pgbench]
    beside: list[Run] = field(default_factory=list)

    def ratios(self) -> list[float]:
        return [run.sustained / bench.tps for run, bench in zip(self.runs, self.after, strict=True)]

    def beside_ratios(self) -> list[float]:
        """Each run beside set against the judged run right after it."""
        return [b.sustained / r.sustained for b, r in zip(self.beside, self.runs, strict=True)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios())

    def each(self) -> str:
        """Every run's sustained rate and ratio, for a target's line."""
        pairs = zip(self.runs, self.ratios(), strict=True)
        return ", ".join(f"{run.sustained:,.0f}/s = {x:.2f}" for run, x in pairs)

    @property
    def baseline(self) -> float:
        """pgbench's TPS for the other rows: the median of every baseline run."""
        return statistics.median(b.tps for b in [self.before, *self.after])


@dataclass(frozen=True)
class Setup:
    """One configuration: where the data lives, API and worker processes, accounts, load."""

    label: str
    harness: Harness = AS_SHIPPED
    workers: int = 1
    accounts: int = 10
    job_workers: int = 0
    embedded: bool = False
    connections: int | None = None  # None: --connections
    pooler: bool = False  # through PgBouncer in transaction mode


POOLER_CONNECTIONS = 20
"""PgBouncer's server connections: as many as the API process's pool, so that the run
measures the pooler's own cost (a hop, each statement prepared again), not fewer backends."""


@contextlib.contextmanager
def through_pooler(setup: Setup, server: str, deployment: Deployment) -> Iterator[None]:
    """For a `pooler` setup, PgBouncer between the gateway and the server for the block."""
    if not setup.pooler:
        yield
        return
    assert deployment.database_url is not None
    with pgbouncer(server, pool=POOLER_CONNECTIONS) as bouncer:
        deployment.env |= {
            "PIXGATE_DATABASE_URL": bouncer.url(deployment.database_url),
            "PIXGATE_DB_POOLER": "transaction",
            "PIXGATE_DIRECT_DATABASE_URL": deployment.database_url,
        }
        yield


def measure(args: argparse.Namespace, setup: Setup) -> Run:
    harness = setup.harness
    deployment = (
        Deployment.embedded(**harness.settings())
        if setup.embedded
        else Deployment.on_server(args.server, **harness.settings())
    )
    connections = setup.connections or args.connections
    try:
        with through_pooler(setup, args.server, deployment):
            return _measure(args, setup, deployment, connections)
    finally:
        deployment.cleanup(args.server, keep=args.keep)


def _measure(
    args: argparse.Namespace, setup: Setup, deployment: Deployment, connections: int
) -> Run:
    harness = setup.harness
    deployment.upgrade()
    created = deployment.accounts(setup.accounts, raised_limits=harness.raised_limits)
    with running(deployment, workers=setup.workers, job_workers=setup.job_workers) as gateway:
        creds = [credentials(gateway.base, account) for account in created]
        env = wrk_auth_env(creds) | {"BENCH_MODE": "cash-out"}
        url = gateway.base + "/api/pix/cash-out"
        load = {"connections": connections, "threads": harness.wrk_threads}
        wrk(
            url,
            "wrk.lua",
            duration=warmup_seconds(args),
            env=env | {"BENCH_RUN": "warmup"},
            **load,
        )
        sql_url = deployment.sql_url()
        asyncio.run(query(sql_url, "CHECKPOINT"))  # no run pays for an earlier one's writes
        settled_before = asyncio.run(query(sql_url, SETTLED))[0][0]
        with CpuMeter(gateway) as meter:
            result = wrk(
                url,
                "wrk.lua",
                duration=args.duration,
                env=env | {"BENCH_RUN": "measure"},
                **load,
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
        if any(v for k, v in checks.items() if k != "transactions"):
            explain_failed_checks(setup.label, checks, sql_url, gateway)
    return Run(
        setup.label,
        result,
        meter.share,
        checks,
        ledger_ok,
        settled_per_s=settled / result.seconds if result.seconds else 0.0,
        unsettled_at_end=unsettled,
    )


def explain_failed_checks(
    label: str, checks: dict[str, int], sql_url: str, gateway: Gateway
) -> None:
    """Print, while the run's database and log still exist, what a failed check counted:
    the suspect settlement jobs and the gateway's warnings and errors."""
    failed = ", ".join(f"{k} {v}" for k, v in checks.items() if k != "transactions" and v)
    print(f"\nexactly-once check failed in {label!r}: {failed}", file=sys.stderr)
    for row in asyncio.run(query(sql_url, SUSPECT_JOBS)):
        print(f"  job {dict(row)}", file=sys.stderr)
    noted = [
        line
        for line in gateway.log_tail(lines=100_000).splitlines()
        if any(word in line.lower() for word in ("warning", "error", "traceback"))
    ]
    for line in noted[-20:]:
        print(f"  log {line[:400]}", file=sys.stderr)


def judge(
    args: argparse.Namespace,
    setup: Setup,
    script: str | None = None,
    beside: Setup | None = None,
) -> Judged:
    """`--repeats` runs of `setup`, each followed by pgbench (TPC-B-like, or `script`) and,
    with `beside`, preceded by a run of that configuration, so that the two are compared
    minutes apart at most, as each run is with its pgbench."""
    before = tpc_b(args, script=script)
    runs: list[Run] = []
    after: list[Pgbench] = []
    besides: list[Run] = []
    for i in range(args.repeats):
        again = "" if i == 0 else f", run {i + 1}"
        if beside is not None:
            besides.append(measure(args, replace(beside, label=beside.label + again)))
        runs.append(measure(args, replace(setup, label=setup.label + again)))
        after.append(tpc_b(args, script=script))
    return Judged(before, runs, after, besides)


def tpc_b(args: argparse.Namespace, clients: int = 64, script: str | None = None) -> Pgbench:
    """pgbench at scale 10 for --duration: TPC-B-like, or `script`."""
    return pgbench(
        args.server, scale=10, clients=clients, threads=2, duration=args.duration, script=script
    )


def shipped_setups(args: argparse.Namespace) -> list[Setup]:
    """The configurations a user may run, each as shipped; the first is the judged one."""
    n = args.accounts
    setups = [
        Setup(f"server, {workers} API process(es), {n} accounts", workers=workers)
        for workers in range(1, args.max_workers + 1)
    ]
    if args.job_workers:
        setups.append(
            Setup(
                f"server, 1 API process + {args.job_workers} `pixgate worker`, {n} accounts",
                job_workers=args.job_workers,
            )
        )
    if not args.skip_embedded:
        setups.append(Setup(f"embedded, 1 API process, {n} accounts", embedded=True))
    setups += [
        Setup(f"server, {workers} API process(es), 1 account", workers=workers, accounts=1)
        for workers in range(1, args.max_workers + 1)
    ]
    return setups


def compare_harnesses(args: argparse.Namespace) -> dict[str, list[Run]]:
    """The judged configuration as shipped, with each change of TUNED_CHANGES, and through
    PgBouncer (when installed), in rounds that run the list forwards then backwards, so that
    a drift over the bench (the host, the server's files) weighs on every variant alike."""
    variants = {"as shipped": Setup("as shipped")} | {
        f"as shipped but {change}": Setup(change, harness=replace(AS_SHIPPED, **values))
        for change, values in TUNED_CHANGES.items()
    }
    if pgbouncer_installed():
        variants["as shipped but through PgBouncer"] = Setup("PgBouncer", pooler=True)
    else:
        print(f"note: {PGBOUNCER_MISSING}: the run through PgBouncer is skipped")
    runs: dict[str, list[Run]] = {label: [] for label in variants}
    for round_ in range(args.rounds):
        order = list(variants.items())
        for label, setup in order if round_ % 2 == 0 else reversed(order):
            runs[label].append(measure(args, replace(setup, label=f"{label}, round {round_ + 1}")))
    return runs


def harness_table(costs: dict[str, list[Run]], baseline: float) -> str:
    def mean(runs: list[Run]) -> float:
        return sum(r.sustained for r in runs) / len(runs)

    shipped = mean(costs["as shipped"])
    return table(
        ["configuration", "sustained/s by round", "mean", "x as shipped", "x pgbench", "p99/p50"],
        [
            [
                label,
                ", ".join(f"{r.sustained:,.0f}" for r in runs),
                mean(runs),
                mean(runs) / shipped,
                mean(runs) / baseline,
                ", ".join(f"{r.tail:.2f}" for r in runs),
            ]
            for label, runs in costs.items()
        ],
    )


def throughput_table(runs: list[Run], baseline: float) -> str:
    return table(
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
                r.tail,
                r.result.non_2xx + r.result.socket_errors,
                r.sustained / baseline,
                r.cpu.describe(),
            ]
            for r in runs
        ],
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
        "scale 10); runs on a single account show the hot-row worst case",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="runs of the judged configuration, each followed by pgbench (the verdict is the "
        "median of their ratios)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="rounds of the harness comparison (forwards, then backwards, ...); 0 skips it",
    )
    parser.add_argument(
        "--cpus",
        type=float,
        default=None,
        help="run as on a host whose CPU is slower for its disk: the bench, the gateway, the "
        "load and the PostgreSQL server share this many CPUs (a cgroup quota; needs root)",
    )
    args = parser.parse_args()
    with cpu_limit(args.cpus):
        return report(args)


def report(args: argparse.Namespace) -> int:
    """Every measurement, its tables and its verdicts; 1 when an exactly-once check failed."""
    print(machine_summary(args.server))
    if args.cpus is not None:
        print(f"CPU quota: {args.cpus:g} CPUs for the bench, the gateway and the server")
    started, stolen = time.monotonic(), stolen_seconds()

    setups = shipped_setups(args)
    embedded_setup = next((setup for setup in setups if setup.embedded), None)
    # the embedded default is judged against the server run right after it, not across the
    # bench: this host moved by a tenth between runs minutes apart
    judging = judge(args, setups[0], beside=embedded_setup)
    judged = judging.runs[0]
    shipped = [
        judged,
        *(
            judging.beside[0] if setup is embedded_setup else measure(args, setup)
            for setup in setups[1:]
        ),
    ]
    baseline = judging.baseline
    # a merchant on one account may run as many API processes as the host has cores
    one_account = [(s, r) for s, r in zip(setups, shipped, strict=True) if s.accounts == 1]
    hottest = max(one_account, key=lambda pair: pair[1].sustained)[0]
    hot_row_judging = judge(args, replace(hottest, label=f"{hottest.label}, paired"), HOT_ROW)
    costs = compare_harnesses(args) if args.rounds else {}
    others = [c for c in LATENCY_CONNECTIONS if c != args.connections]
    by_connections = {args.connections: judged} | {
        c: measure(args, Setup(f"as shipped, {c} connection(s)", connections=c)) for c in others
    }
    pgbench_latency = {
        c: judging.after[0] if c == judging.after[0].clients else tpc_b(args, clients=c)
        for c in LATENCY_CONNECTIONS
    }
    runs = (
        shipped
        + judging.runs[1:]
        + judging.beside[1:]
        + hot_row_judging.runs
        + [run for rounds in costs.values() for run in rounds]
        + [by_connections[c] for c in others]
    )

    print(
        f"\nbaselines: pgbench TPC-B-like, scale 10, 64 clients, 2 threads, {args.duration:g} s: "
        f"{judging.before.tps:,.0f} TPS before the gateway's runs, "
        f"{', '.join(f'{b.tps:,.0f}' for b in judging.after)} TPS after each run of the judged "
        f"configuration (median of all {baseline:,.0f}); "
        f"one row updated by 64 clients: {hot_row_judging.before.tps:,.0f} TPS before the "
        f"one-account runs, {', '.join(f'{b.tps:,.0f}' for b in hot_row_judging.after)} TPS "
        "after each"
    )
    print(
        f"\nPOST /api/pix/cash-out as a user runs it: shipped settings (settlement delay "
        f"{AS_SHIPPED.settlement_delay_ms} ms), default limits, certificate header, "
        f"{args.connections} connections, wrk -t{AS_SHIPPED.wrk_threads}, {args.duration:g} s; "
        f"x pgbench (the median of the baselines, {baseline:,.0f} TPS)"
    )
    print(throughput_table(shipped, baseline))
    print(
        "\none account, the better configuration again, each run against the hot row right "
        "after it (x pgbench: the median of the TPC-B baselines)"
    )
    print(throughput_table(hot_row_judging.runs, baseline))
    if costs:
        print(
            f"\nwhat the tuned harness changes, one thing at a time, {args.rounds} round(s) in "
            f"alternating order (sustained cash-outs/s: the lower of req/s and settled/s)"
        )
        print(harness_table(costs, baseline))
    print("\nlatency at low load: cash-out (as shipped, 10 accounts) beside pgbench TPC-B")
    print(
        table(
            [
                "connections",
                "cash-out p50 ms",
                "p99 ms",
                "req/s",
                "TPC-B p50 ms",
                "p99 ms",
                "TPS",
                "p50 ratio",
            ],
            [
                [
                    c,
                    by_connections[c].result.p50_ms,
                    by_connections[c].result.p99_ms,
                    by_connections[c].result.rps,
                    pgbench_latency[c].p50_ms,
                    pgbench_latency[c].p99_ms,
                    pgbench_latency[c].tps,
                    by_connections[c].result.p50_ms / max(pgbench_latency[c].p50_ms, 1e-9),
                ]
                for c in sorted(by_connections)
                if c in pgbench_latency
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

    ratio = judging.ratio
    errors = judged.result.non_2xx + judged.result.socket_errors
    print(
        f"\ntarget: cash-out as shipped (sustained: min of req/s and settled/s) >= "
        f"{THROUGHPUT_TARGET} x pgbench right after it, the median of {len(judging.runs)} runs: "
        f"{ratio:.2f} (runs: {judging.each()}) -> "
        f"{verdict(ratio >= THROUGHPUT_TARGET)}"
    )
    print(f"target: 0 non-2xx: {errors} -> {verdict(errors == 0)}")
    print(
        f"target: p99 <= {TAIL_TARGET:g} x p50: {judged.tail:.2f} -> "
        f"{verdict(judged.tail <= TAIL_TARGET)}"
    )
    if judging.beside:
        embedded = statistics.median(judging.beside_ratios())
        each = ", ".join(
            f"{b.sustained:,.0f}/s against {r.sustained:,.0f}/s = {x:.2f}"
            for b, r, x in zip(judging.beside, judging.runs, judging.beside_ratios(), strict=True)
        )
        print(
            f"target: embedded >= {EMBEDDED_TARGET} x the server run right after it, the median "
            f"of {len(judging.beside)} runs: {embedded:.2f} (runs: {each}) -> "
            f"{verdict(embedded >= EMBEDDED_TARGET)}"
        )
    one = hot_row_judging.ratio
    print(
        f"target: one account >= {HOT_ROW_TARGET:g} x the one-row update ceiling right after "
        f"it, the median of {len(hot_row_judging.runs)} runs ({hottest.label}, the better of the "
        f"one-account configurations): {one:.2f} (runs: "
        f"{hot_row_judging.each()}) -> {verdict(one >= HOT_ROW_TARGET)}"
    )
    if 1 in by_connections:
        low = by_connections[1].result.p50_ms / max(pgbench_latency[1].p50_ms, 1e-9)
        print(
            f"target: at one connection, cash-out p50 <= {LOW_LOAD_TARGET:g} x TPC-B's: "
            f"{low:.2f} -> {verdict(low <= LOW_LOAD_TARGET)}"
        )
    print(
        f"cores stolen by the host's other guests over the bench: "
        f"{(stolen_seconds() - stolen) / (time.monotonic() - started):.2f}"
    )
    once_ok = all(r.once_ok for r in runs)
    failing = "".join(f"; failed in {r.label!r}" for r in runs if not r.once_ok)
    print(
        f"check: no job handled twice, one final event per transaction, ledger balances -> "
        f"{verdict(once_ok)}{failing}"
    )
    return 0 if once_ok else 1


if __name__ == "__main__":
    sys.exit(main())
