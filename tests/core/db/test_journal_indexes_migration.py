"""The journal's indexes by entry and by account go, and come back on a downgrade; its
primary key and the postings-of-a-transaction index stay throughout."""

from __future__ import annotations

import asyncio

import asyncpg
from alembic import command

from pixgate.core.db import migrate
from tests.conftest import revision_before, scratch_database

BEFORE = revision_before("_journal_indexes.py")
KEPT = {"ledger_postings_pkey", "ix_ledger_postings_transaction_id"}
DROPPED = {"ix_ledger_postings_entry_id", "ix_ledger_postings_account_id"}


def _indexes(url: str) -> set[str]:
    async def names() -> set[str]:
        conn = await asyncpg.connect(url)
        try:
            rows = await conn.fetch(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'ledger_postings'"
            )
            return {r["indexname"] for r in rows}
        finally:
            await conn.close()

    return asyncio.run(names())


def test_the_journal_keeps_only_the_indexes_something_reads() -> None:
    with scratch_database(BEFORE) as url:
        assert _indexes(url) == KEPT | DROPPED

        migrate.upgrade(url)
        assert _indexes(url) == KEPT

        command.downgrade(migrate.alembic_config(url), BEFORE)
        assert _indexes(url) == KEPT | DROPPED
