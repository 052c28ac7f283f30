"""Transaction-list latency on an account with one million transactions.

    python bench/transactions_list.py [--rows 1000000] [--repeat 50]

Creates a scratch database on the server (PIXGATE_BENCH_DATABASE_URL, default the local
PostgreSQL), migrates it, loads one account with `--rows` transactions spread over 31 days
(one INSERT ... SELECT generate_series), then times the service that answers
GET /api/transactions (pixgate.ledger.service.transactions.statement: page query + count) for
the first page, deep pages and each filter. Baselines measured in the same run: a
`SELECT 1` round trip and a primary-key lookup. Drops the database at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import urlparse

import asyncpg

from pixgate.core.db import migrate
from pixgate.core.settings import Settings
from pixgate.ledger.service import transactions
from pixgate.runtime import build_runtime

SERVER = os.environ.get(
    "PIXGATE_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


async def admin(sql: str) -> None:
    conn = await asyncpg.connect(SERVER)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def load(url: str, rows: int) -> int:
    conn = await asyncpg.connect(url)
    try:
        account_id: int = await conn.fetchval(
            "INSERT INTO accounts (name) VALUES ('bench') RETURNING id"
        )
        started = time.perf_counter()
        await conn.execute(
            """
            INSERT INTO transactions (account_id, operation, kind, status, external_id, amount,
                                      fee, end_to_end_id, pix_key, counterpart, created_at,
                                      processed_at)
            SELECT $1,
                   (ARRAY['PAYMENT','WITHDRAW','WITHDRAW','REFUND_IN'])[1 + g % 4],
                   'bench',
                   CASE WHEN g % 50 = 0 THEN 'ERROR' WHEN g % 20 = 0 THEN 'PENDING'
                        ELSE 'CONFIRMED' END,
                   'ext-' || g, 100 + g % 10000, g % 3,
                   'E12345678' || to_char(now() - g * ($2::float8 / $3) * interval '1 second',
                                          'YYYYMMDDHH24MI') || lpad(g::text, 11, '0'),
                   'key' || (g % 1000) || '@example.com',
                   '{"name": "Maria Silva", "document": "52998224725",
                     "bank": {"bankISPB": "60701190", "bankName": "Banco",
                              "bankCode": "341", "accountBranch": "0001",
                              "accountNumber": "1-2"}}'::jsonb,
                   now() - g * ($2::float8 / $3) * interval '1 second',
                   now() - g * ($2::float8 / $3) * interval '1 second'
            FROM generate_series(1, $3) AS g
            """,
            account_id,
            31 * 86400 - 3600,
            rows,
        )
        await conn.execute("VACUUM ANALYZE transactions")
        print(f"loaded {rows:,} transactions in {time.perf_counter() - started:.1f} s")
        return account_id
    finally:
        await conn.close()


async def timed(fn: Callable[[], Awaitable[object]], repeat: int) -> list[float]:
    await fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    name = f"pixgate_bench_{uuid.uuid4().hex[:8]}"
    url = urlparse(SERVER)._replace(path=f"/{name}").geturl()
    await admin(f'CREATE DATABASE "{name}"')
    try:
        migrate.upgrade(url)
        account_id = await load(url, args.rows)
        settings = Settings(database_url=url)
        async with build_runtime(settings, url) as rt:
            async with rt.db.connection() as conn:
                any_id = await conn.fetchval("SELECT max(id) FROM transactions")

            async def select_one() -> object:
                async with rt.db.connection() as conn:
                    return await conn.fetchval("SELECT 1")

            async def pk_lookup() -> object:
                async with rt.db.connection() as conn:
                    return await conn.fetchrow("SELECT * FROM transactions WHERE id = $1", any_id)

            week_ago = (datetime.now(UTC) - timedelta(days=7)).date().isoformat()

            def listing(query: transactions.ListQuery) -> Callable[[], Awaitable[object]]:
                return lambda: transactions.statement(rt, account_id, query)

            page = transactions.ListQuery

            cases: list[tuple[str, Callable[[], Awaitable[object]]]] = [
                ("baseline: SELECT 1", select_one),
                ("baseline: primary-key lookup", pk_lookup),
                ("page 1, size 20", listing(page())),
                ("page 1, size 100", listing(page(size=100))),
                ("page 500, size 20", listing(page(page=500))),
                ("page 5000, size 20", listing(page(page=5000))),
                ("status=ERROR", listing(page(status="ERROR"))),
                ("status=PENDING, page 50", listing(page(status="PENDING", page=50))),
                ("type=PAYMENT", listing(page(type="PAYMENT"))),
                ("externalId exact", listing(page(external_id="ext-4242"))),
                ("last 7 days", listing(page(start_date=week_ago))),
            ]
            results = [(label, await timed(fn, args.repeat)) for label, fn in cases]
        base = statistics.median(results[1][1])
        print(
            f"\nGET /api/transactions service path, {args.rows:,} rows, "
            f"{args.repeat} runs each (ms)"
        )
        print("| case | p50 | p95 | p99 | p50 / PK lookup |")
        print("|---|---|---|---|---|")
        for label, samples in results:
            p50 = statistics.median(samples)
            print(
                f"| {label} | {p50:.2f} | {percentile(samples, 0.95):.2f} | "
                f"{percentile(samples, 0.99):.2f} | {p50 / base:.1f}x |"
            )
        worst = max(percentile(s, 0.99) for label, s in results if "baseline" not in label)
        print(
            f"\ntarget: every page p99 < 50 ms: {worst:.1f} ms -> "
            f"{'PASS' if worst < 50 else 'FAIL'}"
        )
    finally:
        await admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    asyncio.run(main())
