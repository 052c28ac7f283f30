"""Shared fixtures: a real PostgreSQL database, migrated once per session, emptied per test.

`PIXGATE_TEST_DATABASE_URL` names the server (default: the local one); each run creates
its own database there and drops it at the end. After every test the ledger invariants
are checked, so any test that moves money also proves the books still balance.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from urllib.parse import urlparse

import asyncpg
import httpx
import pytest
from alembic.script import ScriptDirectory
from fastapi import FastAPI
from hypothesis import settings as hypothesis_settings

from pixgate.accounts.rules.tokens import Revocations
from pixgate.app import create_app
from pixgate.core.clock import Clock
from pixgate.core.db import migrate
from pixgate.core.settings import Settings
from pixgate.ledger.service import verify
from pixgate.runtime import Runtime, build_runtime
from tests.helpers import empty_database
from tests.missing_tools import pytest_terminal_summary as pytest_terminal_summary
from tests.webhooks.receiver import Receiver

hypothesis_settings.register_profile("pixgate", deadline=None)
hypothesis_settings.load_profile("pixgate")
"""No example is timed: Hypothesis's default deadline (200 ms an example) is a timed check,
which a loaded machine can fail (the first example that builds its Unicode tables the
likeliest), and the suite asserts no time."""

SERVER_URL = os.environ.get(
    "PIXGATE_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


MAX_WORKERS = 2
"""pytest-xdist processes for `-n auto` (pyproject's addopts). Two on two cores took the
suite from 8 to under 5 minutes. Each process has its own database, runtime and servers, with
a pool of up to 30 connections: more processes would reach PostgreSQL's default limit of 100
connections. PYTEST_XDIST_AUTO_NUM_WORKERS, or -n N, overrides it; -n 0 runs in one process."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if "PYTEST_XDIST_AUTO_NUM_WORKERS" in os.environ:
        return None  # xdist's own hook reads it
    return min(MAX_WORKERS, os.cpu_count() or 1)


def _database_url(name: str) -> str:
    parsed = urlparse(SERVER_URL)
    return parsed._replace(path=f"/{name}").geturl()


async def _admin(sql: str) -> None:
    conn = await asyncpg.connect(SERVER_URL)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def revision_before(migration: str) -> str:
    """The revision a migration file (its name's end, such as `_partial_payment_keys.py`)
    revises: where a test of that migration starts."""
    scripts = ScriptDirectory.from_config(migrate.alembic_config(SERVER_URL)).walk_revisions()
    move = next(s for s in scripts if s.path.endswith(migration))
    assert isinstance(move.down_revision, str)
    return move.down_revision


@contextmanager
def scratch_database(revision: str = "head") -> Iterator[str]:
    """A database of its own on the test server, migrated to `revision`, dropped after."""
    name = f"pixgate_test_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    url = _database_url(name)
    try:
        migrate.upgrade(url, revision)
        yield url
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    with scratch_database() as url:
        yield url


@pytest.fixture(scope="session")
def base_settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        settlement_delay_ms=0,
        db_pool_min=2,
        db_pool_max=30,
        log_json=True,
    )


@pytest.fixture(scope="session")
async def session_runtime(base_settings: Settings, database_url: str) -> AsyncIterator[Runtime]:
    async with build_runtime(base_settings, database_url) as runtime:
        yield runtime


@pytest.fixture
async def rt(session_runtime: Runtime, base_settings: Settings) -> AsyncIterator[Runtime]:
    """The runtime with an empty database, default settings and the real clock."""
    await empty_database(session_runtime)
    session_runtime.settings = base_settings
    session_runtime.clock = Clock()
    session_runtime.revocations = Revocations()
    yield session_runtime
    async with session_runtime.db.connection() as conn:
        problems = await verify.problems(conn)
    assert problems == [], f"ledger invariants broken: {problems}"


@pytest.fixture
def app(rt: Runtime) -> FastAPI:
    return create_app(rt.settings, runtime=rt)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    """A live webhook receiver on loopback, for any test that needs one."""
    server = Receiver()
    await server.start()
    yield server
    await server.stop()
