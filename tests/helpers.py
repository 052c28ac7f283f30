"""Builders tests share: accounts made through the service, tokens through HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import asyncpg
import httpx

from pixgate.accounts.queries.accounts import TermsCache
from pixgate.accounts.service import accounts
from pixgate.core.db.batches import Batcher
from pixgate.core.db.pool import Connection
from pixgate.jobs.worker import Worker
from pixgate.runtime import Runtime

SIMPLE_BODY = {"statusCode", "message", "error"}
"""The Central-Bank-style family's error body, exactly."""
GENERAL_ENVELOPE = SIMPLE_BODY | {"code", "timestamp", "path", "method", "errorId"}
"""Every route outside the spec's two fixed shapes (plus `details` when there are some)."""


def assert_general_error(
    response: httpx.Response, status: int, code: str | None = None
) -> dict[str, Any]:
    """The general envelope, for this request, with `status` (and `code`, when given)."""
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) - {"details"} == GENERAL_ENVELOPE, body
    assert body["statusCode"] == status
    assert isinstance(body["message"], str) and body["message"]
    if code is not None:
        assert body["code"] == code, body
    assert body["path"] == response.request.url.path
    assert body["method"] == response.request.method
    assert body["errorId"] == response.headers["x-request-id"]
    return body


def cert_header(pem: str) -> str:
    """What nginx's $ssl_client_escaped_cert sends: RFC 3986 percent-encoding."""
    return quote(pem, safe="")


async def make_account(
    rt: Runtime,
    *,
    name: str = "Loja Teste",
    balance: Decimal | str = "0",
    document: str | None = None,
) -> accounts.NewAccount:
    return await accounts.create(rt, name=name, balance=balance, document=document)


async def balance(rt: Runtime, account_id: int) -> tuple[int, int]:
    """The account's (available, blocked) cents, as stored."""
    async with rt.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT available, blocked FROM accounts WHERE id = $1", account_id
        )
    assert row is not None
    return row["available"], row["blocked"]


async def bearer(client: httpx.AsyncClient, account: accounts.NewAccount) -> dict[str, str]:
    """Headers of an authenticated request for `account`: its token and the bound certificate."""
    certificate = {"X-SSL-Client-Cert": cert_header(account.certificate_pem)}
    response = await client.post(
        "/api/auth/token",
        json={"clientId": account.client_id, "clientSecret": account.client_secret},
        headers=certificate,
    )
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}", **certificate}


async def plan_on_an_empty_table(
    database_url: str, marker: str, query: str, *args: Any, table: str = "transactions"
) -> str:
    """The plan PostgreSQL made for the statement whose plan shows `marker`, while `query` ran
    against an empty `table` with the same indexes (a temporary table, found first on the
    search path): the table as the planner sees it before its first ANALYZE. A plan a
    connection or a database function keeps for the session may be made then."""
    plans: list[str] = []
    conn = await asyncpg.connect(database_url)
    try:
        conn.add_log_listener(lambda _, message: plans.append(message.message))
        async with conn.transaction():
            await conn.execute(
                f"CREATE TEMP TABLE {table} (LIKE public.{table} INCLUDING ALL)"
                " ON COMMIT DROP;"
                "LOAD 'auto_explain';"
                "SET LOCAL auto_explain.log_min_duration = 0;"
                "SET LOCAL auto_explain.log_nested_statements = on;"
                "SET LOCAL client_min_messages = log;"
                # the plan kept for every later call, not one for this call's arguments
                "SET LOCAL plan_cache_mode = force_generic_plan"
            )
            await conn.fetch(query, *args)
    finally:
        await conn.close()
    return next(plan for plan in plans if marker in plan)


async def waiting_for_a_lock(observer: Connection, pid: int) -> None:
    """Until the backend `pid` waits for a lock that another transaction holds."""
    async with asyncio.timeout(10):
        while not await observer.fetchval(  # noqa: ASYNC110 - the state is in the database
            "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
            pid,
        ):
            await asyncio.sleep(0.01)


async def statements_waiting(batcher: Batcher[Any, Any], key: Hashable, count: int) -> None:
    """Until `count` statements wait for the row `key` in `batcher`: the next goes as one."""
    async with asyncio.timeout(5):
        while len(batcher._waiting.get(key, [])) < count:  # noqa: ASYNC110 - batcher's state
            await asyncio.sleep(0.001)


async def function_settings(rt: Runtime, name: str) -> list[str] | None:
    """The settings a database function of the gateway sets for its calls (`SET ...`)."""
    async with rt.db.connection() as conn:
        settings: list[str] | None = await conn.fetchval(
            "SELECT proconfig FROM pg_proc WHERE proname = $1"
            " AND pronamespace = 'public'::regnamespace",
            name,
        )
    return settings


FOOTPRINT = {
    "transactions": "SELECT count(*) FROM transactions",
    "jobs": "SELECT count(*) FROM jobs",
    "postings": "SELECT count(*) FROM ledger_postings",
    "events": "SELECT count(*) FROM events",
    "limit_usage": "SELECT coalesce(sum(used), 0) FROM limit_usage",
}


async def footprint(rt: Runtime) -> dict[str, int]:
    """What any write leaves behind: rows of each kind and the limits' counted volume. Equal
    before and after a refused call: it wrote nothing."""
    async with rt.db.connection() as conn:
        return {name: int(await conn.fetchval(sql)) for name, sql in FOOTPRINT.items()}


KEEP_TABLES = ("alembic_version", "server_keys", "sql_files")
"""What a test's empty database keeps: the schema's version, the gateway's keys, the SQL
files applied."""

EMPTIED_TABLES = """
SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> ALL($1::text[])
"""
RESTARTED_SEQUENCES = """
SELECT s.oid::regclass::text AS name, q.start_value AS start
FROM pg_class s
JOIN pg_sequences q ON q.schemaname = 'public' AND q.sequencename = s.relname
JOIN pg_depend d
    ON d.classid = 'pg_class'::regclass AND d.objid = s.oid AND d.deptype IN ('a', 'i')
JOIN pg_class t ON t.oid = d.refobjid
WHERE s.relkind = 'S' AND t.relname <> ALL($1::text[])
"""
"""The sequences that columns of the emptied tables own, each with its start."""


async def empty_database(rt: Runtime) -> None:
    """Every other table emptied, identities restarted: each test starts from nothing.

    One statement deletes from every table (its foreign keys are checked at its end, when
    every row is gone, so no order is needed) and sets each owned sequence back to its
    start, as `TRUNCATE ... RESTART IDENTITY` would: a test holds a few rows, which DELETE
    removes in milliseconds, where TRUNCATE swaps every table's and index's files (over
    half a second a test on a busy machine).

    The runtime's copy of account terms goes too: account ids restart at 1, so a copy kept
    from the previous test would describe another test's account 1.
    """
    async with rt.db.connection() as conn:
        tables = await conn.fetch(EMPTIED_TABLES, list(KEEP_TABLES))
        sequences = await conn.fetch(RESTARTED_SEQUENCES, list(KEEP_TABLES))
        deletes = ", ".join(f'd{i} AS (DELETE FROM "{t[0]}")' for i, t in enumerate(tables))
        restarts = ", ".join(f"setval('{s['name']}', {s['start']}, false)" for s in sequences)
        await conn.execute(f"WITH {deletes} SELECT {restarts}")
    rt.account_terms = TermsCache()


@asynccontextmanager
async def running_worker(rt: Runtime, **options: Any) -> AsyncIterator[Worker]:
    """A long-running worker for the block, stopped (and waited for) at its end."""
    worker = Worker(rt, **options)
    running = asyncio.create_task(worker.run())
    try:
        yield worker
    finally:
        worker.stop()
        await running
