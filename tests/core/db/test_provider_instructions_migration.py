"""The move of the sandbox scenario out of `transactions.details`: a payout written before
it keeps its scenario (now the provider's), and a downgrade puts it back where it was."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import asyncpg
import orjson
import pytest
from alembic import command

from pixgate.core.db import migrate
from tests.conftest import revision_before, scratch_database

BEFORE = revision_before("_provider_instructions.py")


@pytest.fixture
def old_database() -> Iterator[str]:
    """A database at the revision before the move."""
    with scratch_database(BEFORE) as url:
        yield url


async def _rows(url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetch(sql, *args)
    finally:
        await conn.close()


def _details(rows: list[asyncpg.Record]) -> list[Any]:
    return [orjson.loads(r["details"]) for r in rows]


def test_a_scenario_in_details_becomes_the_providers_and_comes_back(old_database: str) -> None:
    url = old_database
    asyncio.run(
        _rows(
            url,
            """
            WITH a AS (INSERT INTO accounts (name) VALUES ('old') RETURNING id)
            INSERT INTO transactions (account_id, operation, kind, amount, details)
            SELECT a.id, 'WITHDRAW', 'cash_out', 100, d::jsonb FROM a,
                unnest(ARRAY['{"name": "x", "scenario": "ORDER_REJECTED"}',
                             '{"name": "y", "scenario": null}', '{"name": "z"}']) d
            """,
        )
    )
    by_id = "SELECT details FROM transactions ORDER BY id"

    migrate.upgrade(url)
    assert _details(asyncio.run(_rows(url, by_id))) == [{"name": "x"}, {"name": "y"}, {"name": "z"}]
    kept = asyncio.run(_rows(url, "SELECT transaction_id, value FROM provider_instructions"))
    assert [(r["transaction_id"], r["value"]) for r in kept] == [(1, "ORDER_REJECTED")]

    command.downgrade(migrate.alembic_config(url), BEFORE)
    assert _details(asyncio.run(_rows(url, by_id))) == [
        {"name": "x", "scenario": "ORDER_REJECTED"},
        {"name": "y"},
        {"name": "z"},
    ]
