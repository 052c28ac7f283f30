"""What every bench shares: a fresh database, the gateway as a subprocess, wrk, pgbench, tables.

The benches drive the gateway the way an operator would: `pixgate db upgrade`, accounts
made by the service calls of `pixgate accounts create/update` (all of a run's in one process),
`pixgate serve` in a subprocess, and a token from
`POST /api/auth/token`, sent on every call with the client certificate it is bound to.
Load comes from wrk (C, one thread by default so that it takes as little of the machine's
cores as possible from the gateway it measures); the Lua scripts print their own JSON
summary so nothing is parsed out of wrk's human output.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse, urlunparse

import asyncpg
import psutil

BENCH_DIR = Path(__file__).resolve().parent
PIXGATE = str(Path(sys.executable).with_name("pixgate"))
DEFAULT_SERVER = os.environ.get(
    "PIXGATE_BENCH_SERVER", "postgresql://postgres@127.0.0.1:5432/postgres"
)


# --- command line --------------------------------------------------------------------------


def arguments(
    description: str, *, duration: float, connections: int = 64, threads: bool = False
) -> argparse.ArgumentParser:
    """Options every bench takes; `--duration 2` is the CI smoke test. `--threads` only for a
    bench whose wrk runs with as many threads as it is told (`threads`): the others choose
    their own, and would ignore it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--duration", type=float, default=duration, help="seconds per measurement")
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="seconds of warm-up before each measurement (default: duration/4, 1-5 s)",
    )
    parser.add_argument(
        "--connections", type=int, default=connections, help="concurrent connections"
    )
    if threads:
        parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help="admin URL of the PostgreSQL server the bench creates its database on",
    )
    parser.add_argument("--keep", action="store_true", help="keep the database and logs")
    return parser


def warmup_seconds(args: argparse.Namespace) -> float:
    if args.warmup is not None:
        return float(args.warmup)
    return min(5.0, max(1.0, float(args.duration) / 4))


# --- machine and tables --------------------------------------------------------------------


def machine_summary(server: str | None = None) -> str:
    memory_gib = psutil.virtual_memory().total / 2**30
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    text = (
        f"machine: {os.cpu_count()} CPUs, {memory_gib:.1f} GiB, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, load average {load}"
    )
    if server:
        text += f"\nPostgreSQL: {asyncio.run(_server_version(server))}"
    return text


async def _server_version(url: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        return str(await conn.fetchval("SHOW server_version"))
    finally:
        await conn.close()


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (pasteable into docs/performance.md as is)."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# --- databases -----------------------------------------------------------------------------


def with_database(url: str, database: str) -> str:
    parts = urlparse(url)
    return urlunparse(parts._replace(path=f"/{database}"))


def create_database(server: str, prefix: str = "pixgate_bench") -> str:
    """A fresh database on the server; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        conn = await asyncpg.connect(server)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    asyncio.run(create())
    return with_database(server, name)


def drop_database(server: str, url: str) -> None:
    name = urlparse(url).path.lstrip("/")

    async def drop() -> None:
        conn = await asyncpg.connect(server)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()

    asyncio.run(drop())


async def query(url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetch(sql, *args)
    finally:
        await conn.close()


# --- the gateway ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


_MAKE_ACCOUNTS = """
import json, sys
from decimal import Decimal
from pixgate.accounts.service import accounts
from pixgate.cli.common import run
from pixgate.core.money import to_cents

count, balance, raised = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "True"
LIMIT = to_cents(Decimal("1000000000"))
RAISED = {"transaction_limit": LIMIT, "daily_limit": LIMIT, "night_limit": LIMIT}

async def make(rt):
    made = []
    for _ in range(count):
        new = await accounts.create(rt, name="Bench Ltda", balance=balance)
        if raised:
            await accounts.update(rt, new.account_id, RAISED)
        made.append({
            "accountId": new.account_id,
            "clientId": new.client_id,
            "clientSecret": new.client_secret,
            "certificatePem": new.certificate_pem,
        })
    return made

print(json.dumps(run(make)))
"""
"""`Deployment.accounts`: the accounts made in one process, their limits raised to 1,000,000,000
BRL each, converted as `pixgate accounts update` converts them."""


@dataclass
class Deployment:
    """Where the gateway's data lives: a server database URL, or an embedded data directory."""

    env: dict[str, str]
    label: str
    database_url: str | None = None  # None: the embedded default
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="pixgate-bench-")))

    @classmethod
    def on_server(cls, server: str, **settings: str) -> Deployment:
        url = create_database(server)
        env = gateway_env(settings) | {"PIXGATE_DATABASE_URL": url}
        return cls(env=env, label="server", database_url=url)

    @classmethod
    def embedded(cls, **settings: str) -> Deployment:
        deployment = cls(env=gateway_env(settings), label="embedded")
        deployment.env["PIXGATE_DATA_DIR"] = str(deployment.workdir / "data")
        return deployment

    def cli(self, *args: str) -> str:
        """Run `pixgate ARGS` against this deployment; returns stdout."""
        done = subprocess.run(
            [PIXGATE, *args], env=self.env, capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            raise RuntimeError(f"pixgate {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def upgrade(self) -> None:
        if self.database_url is not None:
            self.cli("db", "upgrade")

    def account(self, *, balance: str = "100000000", raised_limits: bool = True) -> dict[str, Any]:
        """An account with a big sandbox balance, and its limits out of the way unless
        `raised_limits` is False (then the gateway's defaults apply, as to a new account)."""
        return self.accounts(1, balance=balance, raised_limits=raised_limits)[0]

    def accounts(
        self, count: int, *, balance: str = "100000000", raised_limits: bool = True
    ) -> list[dict[str, Any]]:
        """`count` accounts as `account` makes them, all in one process: a `pixgate accounts
        create` per account paid a Python start and pixgate's imports each, most of a short
        run's set-up. Each is what `accounts create --json` prints, with the fields a bench
        reads (`accountId`, `clientId`, `clientSecret`, `certificatePem`)."""
        made: list[dict[str, Any]] = json.loads(
            self.python(_MAKE_ACCOUNTS, str(count), balance, str(raised_limits))
        )
        return made

    def sql_url(self) -> str:
        """A URL to run checks with; for the embedded server, the one `pixgate` resolves."""
        if self.database_url is not None:
            return self.database_url
        return self.cli_resolved_url()

    def cli_resolved_url(self) -> str:
        code = (
            "from pixgate.core.settings import Settings; from pixgate.runtime import "
            "resolve_database_url; print(resolve_database_url(Settings()))"
        )
        return self.python(code).strip().splitlines()[-1]

    def python(self, code: str, *args: str) -> str:
        """Run Python `code` (with `args` as sys.argv[1:]) against this deployment, as
        `pixgate` would run; returns stdout."""
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        return done.stdout

    def cleanup(self, server: str, *, keep: bool) -> None:
        if keep:
            print(f"kept: {self.database_url or self.workdir}")
            return
        if self.database_url is not None:
            with contextlib.suppress(Exception):
                drop_database(server, self.database_url)
        shutil.rmtree(self.workdir, ignore_errors=True)


def gateway_env(settings: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    env |= {"PIXGATE_LOG_JSON": "true", "PIXGATE_SETTLEMENT_DELAY_MS": "0"}
    env |= {f"PIXGATE_{k.upper()}": v for k, v in settings.items()}
    return env


class Gateway:
    """`pixgate serve` in a subprocess (its own process group), logs to a file; with
    `job_workers`, the API runs `--no-worker` and that many `pixgate worker` processes run
    the jobs."""

    def __init__(
        self,
        deployment: Deployment,
        *,
        workers: int = 1,
        extra: Sequence[str] = (),
        job_workers: int = 0,
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = deployment.workdir / f"serve-{self.port}.log"
        self._log = self.log_path.open("wb")
        no_worker = ["--no-worker"] if job_workers else []
        self.process = subprocess.Popen(
            [
                PIXGATE,
                "serve",
                "--port",
                str(self.port),
                "--workers",
                str(workers),
                *no_worker,
                *extra,
            ],
            env=deployment.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.job_processes = [
            subprocess.Popen(
                [PIXGATE, "worker"],
                env=deployment.env,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            for _ in range(job_workers)
        ]
        self.workers = workers

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"pixgate serve exited: {self.log_tail()}")
            with (
                contextlib.suppress(OSError, urllib.error.URLError),
                urllib.request.urlopen(f"{self.base}/readyz", timeout=2) as response,
            ):
                if response.status == 200 and self._all_workers_up():
                    return
            time.sleep(0.2)
        raise RuntimeError(f"pixgate serve not ready after {timeout} s: {self.log_tail()}")

    def _all_workers_up(self) -> bool:
        return self.workers == 1 or len(self.api_processes()) >= self.workers

    def api_processes(self) -> list[psutil.Process]:
        """The processes that serve requests: the uvicorn workers, or the one process."""
        try:
            root = psutil.Process(self.process.pid)
            children = [p for p in root.children(recursive=True) if _is_python(p)]
        except psutil.NoSuchProcess:
            return []
        if self.workers == 1:
            return [root]
        # uvicorn's supervisor spawns workers via multiprocessing: the resource tracker and
        # the like are python too, so count only processes that listen on our port's socket.
        return [p for p in children if "multiprocessing.resource_tracker" not in _cmd(p)]

    def rss_mib(self) -> list[float]:
        return [p.memory_info().rss / 2**20 for p in self.api_processes()]

    def cpu_seconds(self) -> float:
        return _cpu_seconds(self.api_processes())

    def job_cpu_seconds(self) -> float:
        return _cpu_seconds([psutil.Process(p.pid) for p in self.job_processes])

    def log_tail(self, lines: int = 30) -> str:
        self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        for process in [self.process, *self.job_processes]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        self._log.close()


def _cpu_seconds(processes: Sequence[psutil.Process]) -> float:
    total = 0.0
    for p in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = p.cpu_times()
            total += times.user + times.system
    return total


def _is_python(process: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return "python" in process.name() or "pixgate" in _cmd(process)
    return False


def _cmd(process: psutil.Process) -> str:
    with contextlib.suppress(psutil.Error):
        return " ".join(process.cmdline())
    return ""


@contextlib.contextmanager
def running(
    deployment: Deployment, *, workers: int = 1, extra: Sequence[str] = (), job_workers: int = 0
) -> Iterator[Gateway]:
    gateway = Gateway(deployment, workers=workers, extra=extra, job_workers=job_workers)
    try:
        gateway.wait_ready()
        yield gateway
    finally:
        gateway.stop()


@dataclass(frozen=True)
class Credentials:
    """A bearer token and the client certificate it is bound to: the gateway refuses the
    token on a request that does not carry that certificate in X-SSL-Client-Cert."""

    access_token: str
    certificate: str  # the PEM percent-encoded, as the X-SSL-Client-Cert header carries it

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.access_token}",
            "X-SSL-Client-Cert": self.certificate,
        }


def credentials(base: str, account: dict[str, Any]) -> Credentials:
    """A token from POST /api/auth/token, with the certificate it is bound to."""
    certificate = quote(account["certificatePem"], safe="")
    body = json.dumps({"clientId": account["clientId"], "clientSecret": account["clientSecret"]})
    request = urllib.request.Request(
        f"{base}/api/auth/token",
        data=body.encode(),
        method="POST",
        headers={"Content-Type": "application/json", "X-SSL-Client-Cert": certificate},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        access: str = json.loads(response.read())["access_token"]
    return Credentials(access_token=access, certificate=certificate)


def wrk_auth_env(creds: Sequence[Credentials]) -> dict[str, str]:
    """BENCH_TOKEN and BENCH_CERT for wrk.lua: tokens and their certificates, comma-separated
    in the same order (percent-encoding leaves no comma in a certificate). None: no auth."""
    if not creds:
        return {}
    return {
        "BENCH_TOKEN": ",".join(c.access_token for c in creds),
        "BENCH_CERT": ",".join(c.certificate for c in creds),
    }


# --- load ----------------------------------------------------------------------------------


@dataclass
class LoadResult:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    non_2xx: int
    socket_errors: int

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def wrk(
    url: str,
    script: str,
    *,
    duration: float,
    connections: int,
    threads: int = 1,
    env: dict[str, str] | None = None,
) -> LoadResult:
    """Run wrk with one of bench/*.lua, which prints a JSON summary on its last line."""
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    threads = min(threads, connections)  # wrk needs a connection per thread: keep the count
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(duration))}s",
        "--timeout",
        "10s",
        "-s",
        str(BENCH_DIR / script),
        url,
    ]
    env = os.environ | (env or {})
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    done_file = env.get("BENCH_DONE_FILE")
    if done_file:  # every thread reached BENCH_MAX_REQUESTS: no need to wait for the duration
        markers = [Path(f"{done_file}.{n}") for n in range(1, threads + 1)]
        while process.poll() is None and not all(m.exists() for m in markers):
            time.sleep(0.1)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        for marker in markers:
            marker.unlink(missing_ok=True)
    stdout, stderr = process.communicate(timeout=duration + 120)
    summary = _last_json(stdout)
    if process.returncode != 0 or summary is None:
        raise RuntimeError(f"wrk failed ({process.returncode}): {stdout}\n{stderr}")
    return LoadResult(
        requests=summary["requests"],
        seconds=summary["duration_us"] / 1e6,
        p50_ms=summary["p50_us"] / 1000,
        p99_ms=summary["p99_us"] / 1000,
        non_2xx=summary["status_errors"],
        socket_errors=summary["socket_errors"],
    )


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            parsed: dict[str, Any] = json.loads(line)
            return parsed
    return None


@dataclass(frozen=True)
class Pgbench:
    """A pgbench TPC-B-like run: transactions per second and per-transaction latency."""

    clients: int
    tps: float
    p50_ms: float
    p99_ms: float


HOT_ROW = "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;\n"
"""A pgbench script: every client updates the same row, the ceiling of one hot row."""


def pgbench(
    server: str,
    *,
    scale: int,
    clients: int,
    threads: int,
    duration: float,
    script: str | None = None,
) -> Pgbench:
    """TPC-B-like pgbench (or `script`) on a throw-away database of the same server: the
    commit-rate ceiling, and (from its per-transaction log) the latency of one transaction at
    this many clients."""
    binary = shutil.which("pgbench") or "/usr/lib/postgresql/15/bin/pgbench"
    url = create_database(server, prefix="pixgate_pgbench")
    logs = Path(tempfile.mkdtemp(prefix="pixgate-pgbench-"))
    custom: list[str] = []
    if script is not None:
        (logs / "script.sql").write_text(script)
        custom = ["-n", "-f", str(logs / "script.sql")]
    try:
        subprocess.run(
            [binary, "-i", "-q", "-s", str(scale), url],
            check=True,
            capture_output=True,
            timeout=600,
        )
        asyncio.run(query(url, "CHECKPOINT"))  # the load's writes start from a clean slate
        done = subprocess.run(
            [
                binary,
                *("-c", str(clients), "-j", str(min(threads, clients))),
                *("-T", str(max(1, round(duration)))),
                *("-l", "--log-prefix", str(logs / "tx")),
                *custom,
                url,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=duration + 300,
        )
        # Each line: client, transaction number, latency in microseconds, ...
        latencies = sorted(
            int(line.split()[2]) / 1000
            for log in logs.glob("tx.*")
            for line in log.read_text().splitlines()
        )
    finally:
        drop_database(server, url)
        shutil.rmtree(logs, ignore_errors=True)
    match = re.search(r"tps = ([\d.]+)", done.stdout)
    if match is None or not latencies:
        raise RuntimeError(f"pgbench output without tps or log: {done.stdout}")
    return Pgbench(
        clients=clients,
        tps=float(match.group(1)),
        p50_ms=latencies[len(latencies) // 2],
        p99_ms=latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
    )


def start_receiver(
    port: int, path: Path | str, options: Sequence[str] = ()
) -> subprocess.Popen[str]:
    """bench/_receiver.py on `port`, recording arrivals to `path`, once it is ready."""
    process = subprocess.Popen(
        [sys.executable, str(BENCH_DIR / "_receiver.py"), str(port), str(path), *options],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    process.stdout.readline()  # "ready"
    return process


def wait_for_jobs(url: str, timeout: float = 180.0, poll: float = 0.5) -> None:
    """Settlement runs after the response: let the workers finish before counting. Jobs due
    more than a minute from now (a charge's expiry) do not count; a settlement queued with
    the sandbox's delay does."""
    due = (
        "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
        " AND run_at <= now() + interval '1 minute'"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = asyncio.run(query(url, due))
        if rows[0][0] == 0:
            return
        time.sleep(poll)
    print(f"warning: jobs still pending after {timeout:.0f} s")


# --- who used the CPU ------------------------------------------------------------------------


@dataclass
class CpuShare:
    """Cores used during a measurement (1.0 = one core busy the whole time)."""

    api: float
    database: float
    load: float
    jobs: float = 0.0
    stolen: float = 0.0

    def describe(self) -> str:
        jobs = f", job workers {self.jobs:.2f}" if self.jobs else ""
        stolen = f"; stolen {self.stolen:.2f}" if self.stolen >= 0.01 else ""
        return (
            f"API {self.api:.2f}{jobs}, PostgreSQL {self.database:.2f}, wrk {self.load:.2f} cores"
            f"{stolen}"
        )


class CpuMeter:
    """CPU seconds of the API processes, the job workers, every postgres process and this
    bench's finished children (wrk), and the host's cores stolen by other guests.

    Backends that exit during the measurement are not counted, so the database share is a
    lower bound; the gateway's pool keeps its connections, so in practice little is missed.
    Other clients of the same server (a test suite running meanwhile) are counted too.
    """

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.share = CpuShare(0.0, 0.0, 0.0)

    def __enter__(self) -> CpuMeter:
        self._postgres = postgres_seconds()
        self._start = (time.monotonic(), self.gateway.cpu_seconds(), _children_seconds())
        self._jobs = self.gateway.job_cpu_seconds()
        self._stolen = stolen_seconds()
        return self

    def __exit__(self, *_: object) -> None:
        wall, api, load = self._start
        elapsed = time.monotonic() - wall
        postgres = postgres_seconds()
        used = sum(seconds - self._postgres.get(pid, 0.0) for pid, seconds in postgres.items())
        self.share = CpuShare(
            api=(self.gateway.cpu_seconds() - api) / elapsed,
            database=used / elapsed,
            load=(_children_seconds() - load) / elapsed,
            jobs=(self.gateway.job_cpu_seconds() - self._jobs) / elapsed,
            stolen=(stolen_seconds() - self._stolen) / elapsed,
        )


def stolen_seconds() -> float:
    """CPU time the hypervisor gave to other guests while this one had work (`steal` in
    /proc/stat, all cores; 0 where the kernel does not count it). A host whose cores are
    taken away runs the gateway slower while the disk flushes as fast: a run with cores stolen
    says so beside its verdict."""
    times = psutil.cpu_times()
    return float(getattr(times, "steal", 0.0))


POSTGRES_NAMES = ("postgres", "postmaster")
"""The process names of a local PostgreSQL server (its postmaster and every backend)."""


def postgres_seconds() -> dict[int, float]:
    """CPU seconds per live postgres process (a process that started meanwhile counts whole)."""
    seconds = {}
    for process in psutil.process_iter(["name", "cpu_times"]):
        times = process.info["cpu_times"]
        if process.info["name"] in POSTGRES_NAMES and times is not None:
            seconds[process.pid] = times.user + times.system
    return seconds


def _children_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --- requests ------------------------------------------------------------------------------

PAYEE = {
    "key": "123e4567-e89b-42d3-a456-426614174000",
    "keyType": "RANDOM",
    "name": "Fulano de Tal",
    "document": "52998224725",
}
"""A PIX key of another bank, which the sandbox settles."""


def cash_out_body(prefix: str, value: float = 0.01) -> dict[str, object]:
    """A POST /api/pix/cash-out body to PAYEE with a new externalId starting with `prefix`."""
    return {
        "value": value,
        "externalId": f"{prefix}-{uuid.uuid4().hex}",
        "description": "bench",
        "details": PAYEE,
    }
