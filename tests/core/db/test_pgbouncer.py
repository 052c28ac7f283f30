"""The gateway behind PgBouncer in transaction mode (`PIXGATE_DB_POOLER=transaction`): its
transactions share a few server connections, so no prepared statement outlives its
transaction; LISTEN goes to PostgreSQL itself (`PIXGATE_DIRECT_DATABASE_URL`), or the workers
poll; `pixgate db upgrade` goes there too."""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import httpx
import pytest

from pixgate.app import create_app
from pixgate.core.db import schema_version as schema
from pixgate.core.db.pool import Database
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime, build_runtime
from tests.conftest import scratch_database
from tests.helpers import bearer, make_account, running_worker
from tests.pgbouncer import MISSING, PgBouncer, installed, pgbouncer
from tests.processes import PIXGATE, free_port, server_env
from tests.support import drain

pytestmark = pytest.mark.skipif(not installed(), reason=MISSING)

PAYMENTS = 40
PAYEE = {
    "key": "123e4567-e89b-42d3-a456-426614174000",
    "keyType": "RANDOM",
    "name": "Fulano de Tal",
    "document": "52998224725",
}


@pytest.fixture(scope="module")
def bouncer(database_url: str) -> Iterator[PgBouncer]:
    with pgbouncer(database_url) as running:
        yield running


def pooled_settings(
    base: Settings, bouncer: PgBouncer, database_url: str, *, direct: bool
) -> Settings:
    return base.model_copy(
        update={
            "database_url": bouncer.url(database_url),
            "db_pooler": "transaction",
            "direct_database_url": database_url if direct else None,
            "db_pool_max": 12,
        }
    )


@pytest.fixture
async def pooled(
    rt: Runtime, base_settings: Settings, bouncer: PgBouncer, database_url: str
) -> AsyncIterator[Runtime]:
    """A runtime on the (emptied) test database through PgBouncer; `rt` checks the ledger."""
    settings = pooled_settings(base_settings, bouncer, database_url, direct=True)
    assert settings.database_url is not None
    async with build_runtime(settings, settings.database_url) as runtime:
        yield runtime


async def cash_outs(runtime: Runtime) -> tuple[int, list[int]]:
    """A new account's token, then PAYMENTS cash-outs of 1.00 sent at once through the app:
    the account, and the cash-outs' status codes."""
    account = await make_account(runtime, balance="1000")
    transport = httpx.ASGITransport(app=create_app(runtime.settings, runtime=runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        headers = await bearer(client, account)

        async def one() -> int:
            body = {"value": 1.0, "externalId": uuid.uuid4().hex, "details": PAYEE}
            response = await client.post("/api/pix/cash-out", json=body, headers=headers)
            return response.status_code

        return account.account_id, list(await asyncio.gather(*(one() for _ in range(PAYMENTS))))


async def settled(rt: Runtime, account_id: int) -> tuple[int, int, int]:
    """(confirmed payouts, what they took: amount + fee, the account's blocked balance)."""
    async with rt.db.connection() as conn:
        row = await conn.fetchrow(
            """SELECT count(*) FILTER (WHERE t.status = 'CONFIRMED') AS confirmed,
                      coalesce(sum(t.amount + t.fee), 0) AS taken,
                      (SELECT blocked FROM accounts WHERE id = $1) AS blocked
               FROM transactions t WHERE t.account_id = $1 AND t.operation = 'WITHDRAW'""",
            account_id,
        )
    assert row is not None
    return row["confirmed"], row["taken"], row["blocked"]


async def test_concurrent_cash_outs_through_pgbouncer_are_accepted_and_settled(
    rt: Runtime, pooled: Runtime
) -> None:
    """Forty requests share three server connections; with prepared statements kept per
    client connection, most would fail with `prepared statement ... does not exist`."""
    account_id, statuses = await cash_outs(pooled)
    assert statuses == [201] * PAYMENTS
    await drain(pooled)
    confirmed, taken, blocked = await settled(rt, account_id)
    assert (confirmed, blocked) == (PAYMENTS, 0)
    async with rt.db.connection() as conn:
        available = await conn.fetchval("SELECT available FROM accounts WHERE id = $1", account_id)
    assert available == 100_000 - taken


async def test_pool_connections_learn_their_types_in_a_transaction(
    rt: Runtime,
    base_settings: Settings,
    bouncer: PgBouncer,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """asyncpg learns a type from the catalog with JIT turned off by one statement and back
    on by another. Behind PgBouncer only a transaction keeps the three on one server
    connection; outside one the catalog query ran JIT-compiled, for a second or more, in the
    middle of the first cash-outs of every new pool connection. Every type the pool's
    connections learn while cash-outs are accepted and settled is learnt inside one."""
    in_transaction: list[bool] = []
    learn = asyncpg.Connection._introspect_types

    async def recorded(self: asyncpg.Connection, *args: Any) -> Any:
        in_transaction.append(self.is_in_transaction())
        return await learn(self, *args)

    monkeypatch.setattr(asyncpg.Connection, "_introspect_types", recorded)
    settings = pooled_settings(base_settings, bouncer, database_url, direct=True)
    assert settings.database_url is not None
    async with build_runtime(settings, settings.database_url) as runtime:
        account_id, statuses = await cash_outs(runtime)
        await drain(runtime)
    assert statuses == [201] * PAYMENTS
    assert (await settled(rt, account_id))[0::2] == (PAYMENTS, 0)
    assert in_transaction and all(in_transaction), in_transaction


async def test_a_worker_behind_pgbouncer_listens_on_postgresql_itself(
    database_url: str, bouncer: PgBouncer
) -> None:
    """A NOTIFY sent through the pooler reaches the LISTEN made past it."""
    db = await Database.connect(
        bouncer.url(database_url),
        min_size=1,
        max_size=2,
        behind_pooler=True,
        direct_dsn=database_url,
    )
    woken = asyncio.Event()
    channel = f"pixgate_test_{uuid.uuid4().hex[:8]}"
    try:
        async with db.listening(channel, lambda *_: woken.set()) as listening:
            async with db.connection() as conn:
                await conn.execute("SELECT pg_notify($1, '')", channel)
            await asyncio.wait_for(woken.wait(), 5)
            assert listening()
    finally:
        await db.close()


async def test_without_a_direct_url_the_worker_polls_and_settles(
    rt: Runtime, base_settings: Settings, bouncer: PgBouncer, database_url: str
) -> None:
    """No LISTEN at all behind a transaction pooler without PIXGATE_DIRECT_DATABASE_URL: a
    worker of another runtime (another process, as far as wake-ups go) finds the jobs by its
    poll."""
    settings = pooled_settings(base_settings, bouncer, database_url, direct=False)
    assert settings.database_url is not None
    async with (
        build_runtime(settings, settings.database_url) as api,
        build_runtime(settings, settings.database_url) as jobs,
    ):
        async with running_worker(jobs):
            account_id, statuses = await cash_outs(api)
            assert statuses == [201] * PAYMENTS
            for _ in range(100):
                if (await settled(rt, account_id))[0] == PAYMENTS:
                    break
                await asyncio.sleep(0.1)
        assert (await settled(rt, account_id))[0::2] == (PAYMENTS, 0)


def test_db_upgrade_goes_to_the_direct_url() -> None:
    """The pooler's address answers nothing here: the command must not use it."""
    with scratch_database("base") as url:
        env = server_env(f"postgresql://postgres@127.0.0.1:{free_port()}/pixgate")
        env |= {"PIXGATE_DB_POOLER": "transaction", "PIXGATE_DIRECT_DATABASE_URL": url}
        upgraded = subprocess.run(
            [PIXGATE, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=120
        )
        assert upgraded.returncode == 0, upgraded.stderr
        assert asyncio.run(schema.is_current(url))
