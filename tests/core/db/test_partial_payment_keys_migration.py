"""A payment's idempotency key and end-to-end id stay unique per account across the move
to partial indexes, both ways, and a database upgraded with payments in it keeps them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from alembic import command

from pixgate.core.db import migrate
from tests.conftest import revision_before, scratch_database

BEFORE = revision_before("_partial_payment_keys.py")
KEY_1, KEY_2 = uuid.uuid4(), uuid.uuid4()

INSERT = """
    INSERT INTO transactions (account_id, operation, kind, amount, idempotency_key,
                              end_to_end_id)
    SELECT id, 'WITHDRAW', 'cash_out', 100, $1, $2 FROM accounts
"""


@pytest.fixture
def old_database() -> Iterator[str]:
    with scratch_database(BEFORE) as url:
        yield url


async def _run(url: str, *statements: tuple[str, tuple[Any, ...]]) -> None:
    conn = await asyncpg.connect(url)
    try:
        for sql, args in statements:
            await conn.execute(sql, *args)
    finally:
        await conn.close()


def _refused(url: str, key: uuid.UUID | None, e2e: str | None) -> bool:
    try:
        asyncio.run(_run(url, (INSERT, (key, e2e))))
    except asyncpg.UniqueViolationError:
        return True
    return False


def test_keys_stay_unique_where_set_and_unset_ones_are_many(old_database: str) -> None:
    url = old_database
    asyncio.run(
        _run(
            url,
            ("INSERT INTO accounts (name) VALUES ('old')", ()),
            (INSERT, (KEY_1, "E1")),
            (INSERT, (None, None)),
        )
    )
    migrate.upgrade(url)
    assert _refused(url, KEY_1, None)
    assert _refused(url, None, "E1")
    assert not _refused(url, None, None)
    assert not _refused(url, KEY_2, "E2")

    command.downgrade(migrate.alembic_config(url), BEFORE)
    assert _refused(url, KEY_2, None)
    assert _refused(url, None, "E2")
    assert not _refused(url, None, None)
