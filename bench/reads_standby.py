"""The primary's load under a read-heavy mix, with and without reads off a standby.

    python bench/reads_standby.py [--duration 10] [--connections 16] [--rounds 2]

Starts a PostgreSQL primary and an asynchronous streaming standby run by Debian's Patroni
and etcd (tests/patroni.py), then serves the gateway on them twice: with every read on the
primary, and with PIXGATE_READ_DATABASE_URL naming the standby. Each run is the same mix:
`--connections` clients reading the account statement (GET /api/transactions) and two
clients sending cash-outs, for `--duration` seconds. Per run: reads/s, cash-outs/s, the CPU
of the primary's and the standby's PostgreSQL processes, and the primary's CPU per request.
`--rounds` take the two setups in alternating order. After the last run, where a few reads
came from, with their lag.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.patroni

from _common import (
    Deployment,
    LoadResult,
    arguments,
    credentials,
    gateway_env,
    machine_summary,
    query,
    running,
    table,
    wait_for_jobs,
    warmup_seconds,
    wrk,
    wrk_auth_env,
)

from tests import patroni

READ_MAX_LAG_S = "5"
WRITERS = 2


@dataclass
class Run:
    label: str
    reads: LoadResult
    writes: LoadResult
    primary_cores: float
    standby_cores: float

    @property
    def primary_ms_per_request(self) -> float:
        requests = self.reads.requests + self.writes.requests
        return self.primary_cores * self.reads.seconds * 1000 / max(requests, 1)


def node_seconds(node: patroni.Node) -> float:
    """CPU seconds of the node's PostgreSQL: its postmaster and every child alive now."""
    postmaster = node.postmaster()
    if postmaster is None:
        return 0.0
    total = 0.0
    for process in [postmaster, *postmaster.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def measure(
    args: argparse.Namespace,
    cluster: patroni.Cluster,
    deployment: Deployment,
    account: dict[str, object],
    label: str,
) -> Run:
    primary = cluster.wait("standby")
    standby = next(n for n in cluster.nodes if n is not primary)
    with running(deployment) as gateway:
        env = wrk_auth_env([credentials(gateway.base, account)])
        reads_url = gateway.base + "/api/transactions"
        writes_url = gateway.base + "/api/pix/cash-out"
        wrk(
            reads_url,
            "wrk.lua",
            duration=warmup_seconds(args),
            connections=args.connections,
            env=env,
        )
        wait_for_jobs(deployment.sql_url())
        before = node_seconds(primary), node_seconds(standby)
        writes: list[LoadResult] = []
        writer = threading.Thread(
            target=lambda: writes.append(
                wrk(
                    writes_url,
                    "wrk.lua",
                    duration=args.duration,
                    connections=WRITERS,
                    env=env | {"BENCH_MODE": "cash-out", "BENCH_RUN": label.replace(" ", "-")},
                )
            )
        )
        writer.start()
        reads = wrk(
            reads_url, "wrk.lua", duration=args.duration, connections=args.connections, env=env
        )
        writer.join()
        after = node_seconds(primary), node_seconds(standby)
    return Run(
        label,
        reads,
        writes[0],
        primary_cores=(after[0] - before[0]) / reads.seconds,
        standby_cores=(after[1] - before[1]) / reads.seconds,
    )


def sources(deployment: Deployment, account: dict[str, object], count: int = 20) -> str:
    """Where `count` statement reads came from, with their lag, on a fresh gateway."""
    with running(deployment) as gateway:
        headers = credentials(gateway.base, account).headers()
        seen: dict[str, list[float]] = {}
        with httpx.Client(base_url=gateway.base, headers=headers) as http:
            for _ in range(count):
                answer = http.get("/api/transactions")
                seen.setdefault(answer.headers["x-read-source"], []).append(
                    float(answer.headers["x-read-lag"])
                )
    return ", ".join(
        f"{where} x{len(lags)} (lag {min(lags):.3f}-{max(lags):.3f} s)"
        for where, lags in seen.items()
    )


def main() -> int:
    parser = arguments(__doc__ or "", duration=10, connections=16)
    parser.add_argument("--rounds", type=int, default=2, help="rounds, in alternating order")
    args = parser.parse_args()
    if not patroni.installed():
        raise SystemExit(patroni.MISSING)
    print(machine_summary(args.server))
    with patroni.cluster(synchronous=False) as cluster:
        subprocess.run(["psql", cluster.url(), "-qc", "CREATE DATABASE pixgate"], check=True)
        primary = cluster.wait("standby")
        standby = next(n for n in cluster.nodes if n is not primary)
        url = cluster.url("pixgate")
        on_primary = Deployment(
            env=gateway_env({}) | {"PIXGATE_DATABASE_URL": url}, label="primary", database_url=url
        )
        off_primary = Deployment(
            env=on_primary.env
            | {
                "PIXGATE_READ_DATABASE_URL": f"postgresql://postgres@127.0.0.1:{standby.pg_port}/pixgate",
                "PIXGATE_READ_MAX_LAG_S": READ_MAX_LAG_S,
            },
            label="standby",
            database_url=url,
        )
        on_primary.upgrade()
        account = on_primary.account()
        asyncio.run(query(url, "ANALYZE"))
        setups = [("every read on the primary", on_primary), ("reads off the standby", off_primary)]
        runs: dict[str, list[Run]] = {label: [] for label, _ in setups}
        for round_ in range(args.rounds):
            for label, deployment in setups if round_ % 2 == 0 else reversed(setups):
                runs[label].append(measure(args, cluster, deployment, account, label))
        seen = sources(off_primary, account)
        for deployment in (on_primary, off_primary):
            shutil.rmtree(deployment.workdir, ignore_errors=True)
    print(
        f"\n{args.connections} clients reading GET /api/transactions and {WRITERS} sending "
        f"cash-outs, {args.duration:g} s a run, {args.rounds} round(s) in alternating order"
    )
    rows = [
        [
            r.label,
            r.reads.rps,
            r.writes.rps,
            r.reads.p50_ms,
            r.reads.p99_ms,
            r.primary_cores,
            r.standby_cores,
            r.primary_ms_per_request,
        ]
        for label in runs
        for r in runs[label]
    ]
    print(
        table(
            [
                "setup",
                "reads/s",
                "cash-outs/s",
                "read p50 ms",
                "p99 ms",
                "primary cores",
                "standby cores",
                "primary CPU ms per request",
            ],
            rows,
        )
    )
    primary_only = statistics.mean(
        r.primary_ms_per_request for r in runs["every read on the primary"]
    )
    offloaded = statistics.mean(r.primary_ms_per_request for r in runs["reads off the standby"])
    print(
        f"\nthe primary's CPU per request (mean of the rounds), reads off the standby x every "
        f"read on it: "
        f"{offloaded / primary_only:.2f}"
    )
    print(f"where reads came from afterwards: {seen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
