"""Round trips per operation: every statement the gateway sends to PostgreSQL, in order.

    python bench/statements.py [--server URL]

Runs the app in-process (httpx ASGITransport) on a fresh migrated server database with
asyncpg query loggers on every pooled connection, does each operation twice (the first
prepares the statements, which costs extra round trips once per connection) and prints
the statements of the second. BEGIN and COMMIT count: each is a round trip. Jobs are run
with `tests.support.drain`, so the settlement and the webhook delivery appear as
their own operations.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' `drain`

from _common import DEFAULT_SERVER, cash_out_body, create_database, drop_database, table

from pixgate.accounts.service import accounts
from pixgate.app import create_app
from pixgate.core.db import migrate
from pixgate.core.settings import Settings
from pixgate.runtime import build_runtime
from tests.support import drain

POOL = 2  # every connection exists from the start, so every one gets a logger


async def run(url: str) -> list[tuple[str, list[str]]]:
    settings = Settings(database_url=url, db_pool_min=POOL, db_pool_max=POOL, settlement_delay_ms=0)
    seen: list[str] = []
    async with build_runtime(settings, url) as rt:
        for holder in rt.db.pool._holders:  # type: ignore[attr-defined]  # no public iterator
            assert holder._con is not None
            holder._con.add_query_logger(lambda q: seen.append(" ".join(q.query.split())))
        account = await accounts.create(rt, name="Bench", balance="1000000")
        await accounts.update(
            rt,
            account.account_id,
            {"night_limit": 10**12, "daily_limit": 10**12, "transaction_limit": 10**12},
        )
        app = create_app(settings, runtime=rt)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            certificate = {"X-SSL-Client-Cert": quote(account.certificate_pem, safe="")}
            token_request = {
                "json": {"clientId": account.client_id, "clientSecret": account.client_secret},
                "headers": certificate,
            }
            response = await client.post("/api/auth/token", **token_request)  # type: ignore[arg-type]
            response.raise_for_status()
            # The token is bound to the certificate: every call carries both.
            auth = {"Authorization": f"Bearer {response.json()['access_token']}", **certificate}

            async def token() -> object:
                return await client.post("/api/auth/token", **token_request)  # type: ignore[arg-type]

            async def balances() -> object:
                return await client.get("/accounts/balances", headers=auth)

            async def cash_out() -> object:
                body = cash_out_body("st")
                return await client.post("/api/pix/cash-out", json=body, headers=auth)

            async def jobs() -> object:
                return await drain(rt)

            operations: list[tuple[str, Callable[[], Awaitable[object]]]] = [
                ("POST /api/auth/token", token),
                ("GET /accounts/balances", balances),
            ]
            probe = await client.get("/api/pix/cash-out", headers=auth)
            if probe.status_code != 404:
                operations += [
                    ("POST /api/pix/cash-out", cash_out),
                    ("jobs after one cash-out (settle, webhooks)", jobs),
                ]
            else:
                print("note: POST /api/pix/cash-out is not served yet; skipped")
            found = []
            for label, operation in operations:
                if operation is not jobs:  # jobs: those of the cash-out measured just before
                    await operation()  # prepares statements on this connection
                if operation is cash_out:
                    await drain(rt)  # prepares the jobs' statements
                seen.clear()
                await operation()
                found.append((label, list(seen)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", default=DEFAULT_SERVER)
    args = parser.parse_args()
    url = create_database(args.server)
    try:
        migrate.upgrade(url)
        found = asyncio.run(run(url))
    finally:
        drop_database(args.server, url)
    print(table(["operation", "round trips"], [[label, len(sql)] for label, sql in found]))
    for label, statements in found:
        print(f"\n{label}:")
        for number, sql in enumerate(statements, 1):
            print(f"  {number:2}. {sql[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
