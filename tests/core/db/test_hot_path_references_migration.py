"""The references every payment writes lose their foreign keys and get them back: after the
upgrade the database takes a row naming a missing account or transaction (`pixgate ledger
verify` reports it instead), after the downgrade it refuses one again, and a row naming the
ones written before the upgrade is taken at every step."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import asyncpg
import pytest
from alembic import command

from pixgate.core.db import migrate
from tests.conftest import revision_before, scratch_database

BEFORE = revision_before("_hot_path_references.py")
MISSING = 999999

ACCOUNT = "INSERT INTO accounts (name) VALUES ('old') RETURNING id"
PAYMENT = """
    INSERT INTO transactions (account_id, operation, kind, amount)
    VALUES ($1, 'PAYMENT', 'cash_in', 100) RETURNING id
"""
WRITES = {
    "transactions": (PAYMENT, lambda account, _: (account,)),
    "ledger_postings": (
        "INSERT INTO ledger_postings (entry_id, account_id, book, amount, transaction_id, memo)"
        " VALUES (nextval('ledger_entry_seq'), $1, 'available', 0, $2, 'test')",
        lambda account, transaction: (account, transaction),
    ),
    "events": (
        "INSERT INTO events (account_id, type, transaction_id, data)"
        " VALUES ($1, 'cash_in', $2, '{}')",
        lambda account, transaction: (account, transaction),
    ),
    "limit_usage": (
        "INSERT INTO limit_usage (account_id, bucket, used) VALUES ($1, now(), 0)",
        lambda account, _: (account,),
    ),
}


@pytest.fixture
def old_database() -> Iterator[str]:
    with scratch_database(BEFORE) as url:
        yield url


async def _writes(url: str, account: int | None, transaction: int | None) -> dict[str, bool]:
    """Each table: whether a row naming `account` and `transaction` (None: real ones) was
    taken; every write is rolled back."""
    conn = await asyncpg.connect(url)
    try:
        real_account = await conn.fetchval("SELECT min(id) FROM accounts")
        real_transaction = await conn.fetchval("SELECT min(id) FROM transactions")
        taken = {}
        for table, (sql, args) in WRITES.items():
            block = conn.transaction()
            await block.start()
            try:
                await conn.execute(
                    sql, *args(account or real_account, transaction or real_transaction)
                )
                taken[table] = True
            except asyncpg.ForeignKeyViolationError:
                taken[table] = False
            finally:
                await block.rollback()
        return taken
    finally:
        await conn.close()


async def _seed(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        account = await conn.fetchval(ACCOUNT)
        await conn.fetchval(PAYMENT, account)
    finally:
        await conn.close()


def test_references_are_checked_before_and_after_a_downgrade_but_not_at_head(
    old_database: str,
) -> None:
    url = old_database
    asyncio.run(_seed(url))
    every = dict.fromkeys(WRITES, True)
    assert asyncio.run(_writes(url, None, None)) == every
    assert asyncio.run(_writes(url, MISSING, MISSING)) == dict.fromkeys(WRITES, False)

    migrate.upgrade(url)
    assert asyncio.run(_writes(url, None, None)) == every
    assert asyncio.run(_writes(url, MISSING, MISSING)) == every

    command.downgrade(migrate.alembic_config(url), BEFORE)
    assert asyncio.run(_writes(url, None, None)) == every
    assert asyncio.run(_writes(url, MISSING, MISSING)) == dict.fromkeys(WRITES, False)
