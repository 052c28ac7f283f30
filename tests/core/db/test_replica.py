"""Reads off the primary (PIXGATE_READ_DATABASE_URL): the statement, the transaction lists
and the event list come from a streaming standby while it is within PIXGATE_READ_MAX_LAG_S,
from the primary otherwise; each answer says which, and how far behind it was. Everything
that moves money reads the primary."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from pixgate.core.db.pool import Database
from pixgate.core.db.replica import Replica
from pixgate.runtime import Runtime
from tests import patroni
from tests.helpers import bearer, make_account
from tests.processes import free_port
from tests.reliability.load import order, serving

LISTS = ("/api/transactions", "/api/events")


def source(response: httpx.Response) -> tuple[str, float]:
    assert response.status_code == 200, response.text
    return response.headers["x-read-source"], float(response.headers["x-read-lag"])


Point = Callable[[str], Awaitable[None]]


@pytest.fixture
async def replica_at(rt: Runtime, app: FastAPI) -> AsyncIterator[Point]:
    """Point the app's reads at the server of a URL, as PIXGATE_READ_DATABASE_URL does."""
    opened: list[Database] = []

    async def point(url: str) -> None:
        db = await Database.connect(url, min_size=0, connect_timeout=2)
        opened.append(db)
        app.state.runtime = dataclasses.replace(rt, replica=Replica(db, max_lag_s=5.0))

    yield point
    app.state.runtime = rt
    for db in opened:
        await db.close()


async def test_without_a_standby_every_read_is_the_primarys(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    headers = await bearer(client, await make_account(rt))
    for path in LISTS:
        assert source(await client.get(path, headers=headers)) == ("primary", 0.0)


async def test_a_standby_out_of_reach_leaves_reads_on_the_primary(
    rt: Runtime, client: httpx.AsyncClient, replica_at: Point
) -> None:
    account = await make_account(rt, balance="10.00")
    headers = await bearer(client, account)
    created = await client.post("/api/pix/cash-out", json=order("read-1"), headers=headers)
    assert created.status_code == 201, created.text
    await replica_at(f"postgresql://postgres@127.0.0.1:{free_port()}/nothing")
    listed = await client.get("/api/transactions", headers=headers)
    assert source(listed) == ("primary", 0.0)
    assert [t["externalId"] for t in listed.json()["data"]] == ["read-1"]
    assert source(await client.get("/api/events", headers=headers)) == ("primary", 0.0)


async def test_a_server_that_is_not_a_standby_is_not_read_as_one(
    rt: Runtime, client: httpx.AsyncClient, replica_at: Point
) -> None:
    """A standby that was promoted (or a primary named by mistake) takes writes of its own:
    the gateway does not read it as its standby."""
    headers = await bearer(client, await make_account(rt))
    assert rt.settings.database_url is not None
    await replica_at(rt.settings.database_url)
    assert source(await client.get("/api/transactions", headers=headers)) == ("primary", 0.0)


def _psql(url: str, sql: str) -> str:
    done = subprocess.run(
        ["psql", url, "-Atc", sql], check=True, capture_output=True, text=True, timeout=30
    )
    return done.stdout.strip()


def _until(check: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


@pytest.mark.skipif(not patroni.installed(), reason=patroni.MISSING)
def test_reads_come_from_a_streaming_standby_until_it_falls_behind(tmp_path: Path) -> None:
    max_lag = 1.0
    with patroni.cluster(synchronous=False) as cluster:
        leader = cluster.wait("standby")
        standby = next(n for n in cluster.nodes if n is not leader)
        standby_url = f"postgresql://postgres@127.0.0.1:{standby.pg_port}/pixgate"
        _psql(cluster.url(), "CREATE DATABASE pixgate")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
        env |= {
            "PIXGATE_DATABASE_URL": cluster.url("pixgate"),
            "PIXGATE_READ_DATABASE_URL": standby_url,
            "PIXGATE_READ_MAX_LAG_S": str(max_lag),
            "PIXGATE_LOG_JSON": "true",
        }
        with (
            serving(env, tmp_path / "serve.log") as gateway,
            httpx.Client(base_url=gateway.base, headers=gateway.headers) as http,
        ):

            def listed(external_id: str, where: str) -> bool:
                answer = http.get("/api/transactions")
                ids = [t["externalId"] for t in answer.json()["data"]]
                return source(answer)[0] == where and external_id in ids

            def available() -> Decimal:
                found = http.get("/accounts/balances").json()
                return Decimal(str(found["data"][0]["balanceAmount"]["available"]))

            before = available()
            assert http.post("/api/pix/cash-out", json=order("first")).status_code == 201
            paid = before - available()
            _until(lambda: listed("first", "standby"), "the standby never served the list")
            source_, lag = source(http.get("/api/transactions"))
            assert source_ == "standby" and 0 <= lag <= max_lag
            assert source(http.get("/api/events"))[0] == "standby"

            # The standby stops replaying (Patroni would resume it): it falls behind, and the
            # primary answers.
            cluster.maintenance()
            _psql(standby_url, "SELECT pg_wal_replay_pause()")
            assert http.post("/api/pix/cash-out", json=order("second")).status_code == 201
            assert available() == before - 2 * paid, "money is read from the primary"
            assert _psql(standby_url, "SELECT count(*) FROM transactions") == "1"
            _until(lambda: listed("second", "primary"), "a standby behind was still read")

            # It catches up: reads go back to it.
            _psql(standby_url, "SELECT pg_wal_replay_resume()")
            _until(lambda: listed("second", "standby"), "reads never came back to the standby")


@pytest.mark.skipif(not patroni.installed(), reason=patroni.MISSING)
def test_after_a_failover_reads_find_the_new_standby(tmp_path: Path) -> None:
    """The read URL names both nodes with `target_session_attrs=standby`. The primary dies
    and the standby is promoted: the promoted node is no standby, so reads go to the primary;
    once the old primary is back as a standby, they go to it."""
    with patroni.cluster(synchronous=True) as cluster:
        leader = cluster.wait("standby")
        _psql(cluster.url(), "CREATE DATABASE pixgate")
        both = ",".join(f"127.0.0.1:{node.pg_port}" for node in cluster.nodes)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
        env |= {
            "PIXGATE_DATABASE_URL": cluster.url("pixgate"),
            "PIXGATE_READ_DATABASE_URL": (
                f"postgresql://postgres@{both}/pixgate?target_session_attrs=standby"
            ),
            "PIXGATE_LOG_JSON": "true",
        }
        with (
            serving(env, tmp_path / "serve.log") as gateway,
            httpx.Client(base_url=gateway.base, headers=gateway.headers) as http,
        ):

            def read_from(where: str) -> bool:
                answer = http.get("/api/transactions")
                return answer.status_code == 200 and source(answer)[0] == where

            _until(lambda: read_from("standby"), "the standby was never read")
            leader.kill()
            _until(lambda: cluster.leader() not in (None, leader), "no promotion", 60)
            _until(lambda: read_from("primary"), "the promoted node was read as a standby", 30)
            leader.restart()
            cluster.wait("standby", timeout=90)
            _until(lambda: read_from("standby"), "reads never found the new standby", 30)
            assert http.post("/api/pix/cash-out", json=order("after")).status_code == 201
