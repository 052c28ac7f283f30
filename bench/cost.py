"""What one payment costs the machines: CPU, round trips, WAL and rows, and on paper the
hosts a PSP needs.

    python bench/cost.py [--count 1000] [--rounds 3] [--connections 8]

Serves the gateway as a user runs it (shipped settings, the client certificate header on
every call) on a fresh server database, with its jobs in one separate `pixgate worker`
process so that the API's CPU and the worker's are told apart. Three phases, each of
`--count` payments sent by `--connections` concurrent clients after a warm-up, each
measured from its first request until every job it caused has finished; the three phases
run `--rounds` times in turn, and each figure is the median of its rounds:

1. cash-out, from an account with no webhook: the request, the settlement, the event;
2. cash-out, from an account whose `cash_out` webhook points to a local receiver: the same
   and one webhook delivered. Per webhook delivered = phase 2 - phase 1;
3. charge paid: POST /api/pix/cash-in, then the sandbox payer's POST /sandbox/pix/pay (it
   stands in for the message from the Central Bank a real provider would relay), the
   credit, the event.

Per payment: CPU ms of the API process, of the worker and of every PostgreSQL process
(backends, WAL writer, checkpointer, autovacuum); round trips to the database (messages
the gateway's processes sent on their database connections: the kernel's per-socket
data_segs_out, from `ss -ti`); database transactions committed; WAL bytes (the insert
position's advance) and full-page images (pg_stat_wal), both of the whole server: run it on
an idle one; rows inserted, updated and deleted, per table. From these, on paper: the API
and worker cores and the PostgreSQL cores for 1,000, 5,000 and 20,000 payments/s of a mix
of half cash-outs, half charges paid, each with its webhook.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Credentials,
    Deployment,
    Gateway,
    arguments,
    cash_out_body,
    credentials,
    free_port,
    machine_summary,
    postgres_seconds,
    query,
    running,
    start_receiver,
    table,
    wait_for_jobs,
)

PAYER = {"name": "Joao Pagador", "document": "52998224725"}
CHARGE_PAYER = {"fullName": "Maria da Silva", "document": "11144477735"}
STATS_FLUSH_S = 11.0
"""PostgreSQL 15 backends publish their table counters when idle for 10 s at the latest."""
RATES = (1_000, 5_000, 20_000)
BUSY = 0.6
"""The share of a core a plan counts on: headroom for bursts, vacuum and failover."""
DB_PORT_PATTERN = re.compile(r"data_segs_out:(\d+)")


@dataclass
class Usage:
    """Counters read the moment a phase's last job has finished: the idle gateway's polling
    afterwards is not the payments' cost."""

    api_s: float
    worker_s: float
    postgres: dict[int, float]
    segments: dict[str, int]
    wal_position: int


@dataclass
class Writes:
    """PostgreSQL's counters of commits and rows, read once the backends have published them
    (STATS_FLUSH_S later)."""

    commits: int
    wal_fpi: int
    rows: dict[str, int]


@dataclass
class Cost:
    """One phase's cost divided by its payments."""

    label: str
    api_ms: float
    worker_ms: float
    postgres_ms: float
    round_trips: float
    commits: float
    wal_bytes: float
    wal_fpi: float
    rows: dict[str, float] = field(default_factory=dict)

    @property
    def rows_written(self) -> float:
        return sum(self.rows.values())


NUMBERS = ("api_ms", "worker_ms", "postgres_ms", "round_trips", "commits", "wal_bytes", "wal_fpi")


def combine(label: str, terms: Sequence[tuple[Cost, float]]) -> Cost:
    """The sum of weighted costs, field by field (a weight of -1 subtracts)."""
    tables = {t for c, _ in terms for t in c.rows}
    numbers = {name: sum(getattr(c, name) * w for c, w in terms) for name in NUMBERS}
    rows = {t: sum(c.rows.get(t, 0.0) * w for c, w in terms) for t in tables}
    return Cost(label=label, rows=rows, **numbers)


def median(costs: Sequence[Cost]) -> Cost:
    """Field by field, the median of several rounds of one phase."""
    tables = {t for c in costs for t in c.rows}
    numbers = {name: statistics.median(getattr(c, name) for c in costs) for name in NUMBERS}
    rows = {t: statistics.median(c.rows.get(t, 0.0) for c in costs) for t in tables}
    return Cost(label=costs[0].label, rows=rows, **numbers)


def socket_segments(pids: set[int]) -> dict[str, int]:
    """Messages sent so far on each database connection of these processes (keyed by the
    local address, which a reconnection changes)."""
    done = subprocess.run(
        ["ss", "-tinpH", "state", "established", "( dport = :5432 )"],
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, int] = {}
    lines = done.stdout.splitlines()
    for head, detail in zip(lines[::2], lines[1::2], strict=False):
        owners = {int(pid) for pid in re.findall(r"pid=(\d+)", head)}
        segments = DB_PORT_PATTERN.search(detail)
        if owners & pids and segments is not None:
            found[head.split()[2]] = int(segments.group(1))
    return found


def usage(gateway: Gateway, url: str) -> Usage:
    pids = {p.pid for p in gateway.api_processes()} | {p.pid for p in gateway.job_processes}
    position = asyncio.run(query(url, "SELECT pg_current_wal_insert_lsn()::text"))[0][0]
    high, low = position.split("/")
    return Usage(
        api_s=gateway.cpu_seconds(),
        worker_s=gateway.job_cpu_seconds(),
        postgres=postgres_seconds(),
        segments=socket_segments(pids),
        wal_position=int(high, 16) << 32 | int(low, 16),
    )


def writes(url: str, quiet_s: float) -> Writes:
    """After `quiet_s` of quiet (STATS_FLUSH_S: every backend's counters are in)."""
    time.sleep(quiet_s)
    return asyncio.run(_writes(url))


async def _writes(url: str) -> Writes:
    commits = await query(
        url, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
    )
    tables = await query(
        url,
        "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS written FROM pg_stat_user_tables",
    )
    fpi = await query(url, "SELECT wal_fpi FROM pg_stat_wal")
    return Writes(commits[0][0], fpi[0][0], {row["relname"]: row["written"] for row in tables})


def cost(label: str, before: tuple[Usage, Writes], after: tuple[Usage, Writes], count: int) -> Cost:
    (used, wrote), (used_after, wrote_after) = before, after
    postgres = sum(s - used.postgres.get(pid, 0.0) for pid, s in used_after.postgres.items())
    segments = sum(s - used.segments.get(k, 0) for k, s in used_after.segments.items())
    rows = {t: (n - wrote.rows.get(t, 0)) / count for t, n in wrote_after.rows.items()}
    return Cost(
        label=label,
        api_ms=(used_after.api_s - used.api_s) * 1000 / count,
        worker_ms=(used_after.worker_s - used.worker_s) * 1000 / count,
        postgres_ms=postgres * 1000 / count,
        round_trips=segments / count,
        commits=(wrote_after.commits - wrote.commits) / count,
        wal_bytes=(used_after.wal_position - used.wal_position) / count,
        wal_fpi=(wrote_after.wal_fpi - wrote.wal_fpi) / count,
        rows={t: n for t, n in rows.items() if n},
    )


Payment = Callable[[httpx.AsyncClient, Credentials], Awaitable[None]]


async def cash_out(client: httpx.AsyncClient, creds: Credentials) -> None:
    response = await client.post(
        "/api/pix/cash-out", json=cash_out_body("cost"), headers=creds.headers()
    )
    response.raise_for_status()


async def charge_paid(client: httpx.AsyncClient, creds: Credentials) -> None:
    body = {
        "transaction": {
            "value": 1.0,
            "description": "cost",
            "externalId": f"cost-ch-{uuid.uuid4().hex}",
        },
        "payer": CHARGE_PAYER,
    }
    created = await client.post("/api/pix/cash-in", json=body, headers=creds.headers())
    created.raise_for_status()
    pay = {"pixCode": created.json()["pixCode"], "payer": PAYER}
    paid = await client.post("/sandbox/pix/pay", json=pay, headers=creds.headers())
    paid.raise_for_status()


async def send(
    base: str, creds: Credentials, payment: Payment, count: int, connections: int
) -> None:
    """`count` payments from `connections` clients, each sending its next once answered."""
    turns = iter(range(count))
    limits = httpx.Limits(max_connections=connections)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:

        async def one_client() -> None:
            for _ in turns:
                await payment(client, creds)

        await asyncio.gather(*(one_client() for _ in range(connections)))


def measure(
    label: str,
    gateway: Gateway,
    url: str,
    creds: Credentials,
    payment: Payment,
    *,
    count: int,
    connections: int,
    warmup: int,
    quiet_s: float,
) -> Cost:
    asyncio.run(send(gateway.base, creds, payment, warmup, connections))
    wait_for_jobs(url)
    wrote = writes(url, quiet_s)
    before = (usage(gateway, url), wrote)
    asyncio.run(send(gateway.base, creds, payment, count, connections))
    wait_for_jobs(url, poll=0.05)
    used = usage(gateway, url)
    return cost(label, before, (used, writes(url, quiet_s)), count)


@contextmanager
def receiver() -> Iterator[str]:
    """A local webhook receiver (bench/_receiver.py) answering 204; yields its URL."""
    port = free_port()
    process = start_receiver(port, "/dev/null")
    try:
        yield f"http://127.0.0.1:{port}/hook"
    finally:
        process.terminate()
        process.wait(timeout=10)


def cost_table(costs: list[Cost]) -> str:
    return table(
        [
            "per",
            "API CPU ms",
            "worker CPU ms",
            "PostgreSQL CPU ms",
            "round trips",
            "commits",
            "WAL bytes",
            "full-page images",
            "rows written",
        ],
        [
            [
                c.label,
                c.api_ms,
                c.worker_ms,
                c.postgres_ms,
                c.round_trips,
                c.commits,
                round(c.wal_bytes),
                c.wal_fpi,
                c.rows_written,
            ]
            for c in costs
        ],
    )


def rows_table(costs: list[Cost]) -> str:
    tables = sorted({t for c in costs for t in c.rows})
    return table(
        ["table", *(c.label for c in costs)],
        [[t, *(round(c.rows.get(t, 0.0), 2) for c in costs)] for t in tables],
    )


def plan(mix: Cost) -> str:
    """Cores for each rate at BUSY utilisation, and the WAL it writes."""
    rows = []
    for rate in RATES:
        rows.append(
            [
                f"{rate:,}/s",
                rate * mix.api_ms / 1000 / BUSY,
                rate * mix.worker_ms / 1000 / BUSY,
                rate * mix.postgres_ms / 1000 / BUSY,
                rate * mix.wal_bytes / 2**20,
                round(rate * mix.round_trips),
            ]
        )
    return table(
        [
            "payments",
            "API cores",
            "worker cores",
            "PostgreSQL cores",
            "WAL MiB/s",
            "round trips/s",
        ],
        rows,
    )


def main() -> int:
    parser = arguments(__doc__ or "", duration=0, connections=8)
    parser.add_argument("--count", type=int, default=1000, help="payments per phase")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three phases")
    parser.add_argument(
        "--quiet",
        type=float,
        default=STATS_FLUSH_S,
        help="seconds to wait for PostgreSQL's row and commit counters (less: incomplete)",
    )
    args = parser.parse_args()
    print(machine_summary(args.server))
    deployment = Deployment.on_server(
        args.server, allow_insecure_webhooks="true", settlement_delay_ms="200"
    )
    url = deployment.database_url or ""
    warmup = max(10, args.count // 10)
    try:
        deployment.upgrade()
        quiet, hooked, charging = deployment.accounts(3)
        with receiver() as hook:
            deployment.cli(
                "webhooks", "add", "--account", str(hooked["accountId"]), "--event", "cash_out",
                "--url", hook,
            )  # fmt: skip
            with running(deployment, job_workers=1) as gateway:
                phases = [
                    ("cash-out", quiet, cash_out),
                    ("cash-out + webhook", hooked, cash_out),
                    ("charge paid", charging, charge_paid),
                ]
                rounds: dict[str, list[Cost]] = {label: [] for label, _, _ in phases}
                for _ in range(args.rounds):
                    for label, account, payment in phases:
                        measured = measure(
                            label,
                            gateway,
                            url,
                            credentials(gateway.base, account),
                            payment,
                            count=args.count,
                            connections=args.connections,
                            warmup=warmup,
                            quiet_s=args.quiet,
                        )
                        rounds[label].append(measured)
    finally:
        deployment.cleanup(args.server, keep=args.keep)
    plain, hooked_cost, charge = (median(costs) for costs in rounds.values())
    webhook = combine("webhook delivered", [(hooked_cost, 1.0), (plain, -1.0)])
    all_costs = [plain, charge, webhook]
    print(
        f"\n{args.count} payments per phase, {args.connections} clients, after {warmup}; "
        f"the median of {args.rounds} rounds"
    )
    for label, costs in rounds.items():
        spread = ", ".join(f"{c.api_ms + c.worker_ms + c.postgres_ms:.2f}" for c in costs)
        print(f"  {label}: CPU ms (API + worker + PostgreSQL) by round: {spread}")
    print(cost_table(all_costs))
    print("\nRows written per payment, by table:")
    print(rows_table(all_costs))
    mix = combine(
        "half cash-outs, half charges paid, each with its webhook",
        [(plain, 0.5), (charge, 0.5), (webhook, 1.0)],
    )
    print(f"\nOn paper, at {BUSY:.0%} of each core, for a mix of {mix.label}:")
    print(plan(mix))
    print(f"(threads of one machine: {psutil.cpu_count()}; PostgreSQL: the primary alone)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
