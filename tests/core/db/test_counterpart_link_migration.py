"""Migration 0015 fills the counterpart link of the rows written before it, from their
`counterpart` document as the twin lookup read it then: the ISPB as written, and our account
only for the gateway's own ISPB with an account number that names an existing account."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest

from pixgate.core.db import migrate
from tests.conftest import scratch_database

OURS = "87654321"
"""The gateway's ISPB while the migration runs (PIXGATE_ISPB), not the default one."""
ELSEWHERE = "60701190"


def _bank(ispb: str, number: str) -> dict[str, Any]:
    return {
        "name": "Fulano",
        "document": "52998224725",
        "bank": {"bankISPB": ispb, "accountNumber": number, "accountBranch": "0001"},
    }


@pytest.fixture
def at_0014() -> Iterator[str]:
    """A new database migrated up to the revision before the link."""
    with scratch_database("0014") as url:
        yield url


async def _write_old_rows(url: str, counterparts: dict[str, Any]) -> int:
    """Two accounts and one PAYMENT per counterpart (its description names it); the second
    account's id."""
    conn = await asyncpg.connect(url)
    try:
        first = await conn.fetchval("INSERT INTO accounts (name) VALUES ('A') RETURNING id")
        second = await conn.fetchval("INSERT INTO accounts (name) VALUES ('B') RETURNING id")
        for label, counterpart in counterparts.items():
            await conn.execute(
                "INSERT INTO transactions (account_id, operation, kind, status, amount,"
                " counterpart, description) VALUES ($1, 'PAYMENT', 'incoming', 'CONFIRMED',"
                " 100, $2::jsonb, $3)",
                first,
                None if counterpart is None else json.dumps(counterpart),
                label,
            )
        return int(second)
    finally:
        await conn.close()


async def _links(url: str) -> dict[str, tuple[str | None, int | None]]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT description, counterpart_ispb, counterpart_account_id FROM transactions"
        )
    finally:
        await conn.close()
    return {r["description"]: (r["counterpart_ispb"], r["counterpart_account_id"]) for r in rows}


def test_the_upgrade_fills_the_link_of_old_rows(
    at_0014: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIXGATE_ISPB", OURS)
    second = asyncio.run(
        _write_old_rows(
            at_0014,
            {
                "ours": _bank(OURS, "2"),
                "ours, no such account": _bank(OURS, "999"),
                "ours, not a number": _bank(OURS, "2a"),
                "ours, leading zero": _bank(OURS, "02"),
                "elsewhere, same number": _bank(ELSEWHERE, "2"),
                "no bank": {"name": "Fulano"},
                "no counterpart": None,
            },
        )
    )
    assert second == 2

    migrate.upgrade(at_0014, "0015")

    assert asyncio.run(_links(at_0014)) == {
        "ours": (OURS, second),
        "ours, no such account": (OURS, None),
        "ours, not a number": (OURS, None),
        "ours, leading zero": (OURS, None),
        "elsewhere, same number": (ELSEWHERE, None),
        "no bank": (None, None),
        "no counterpart": (None, None),
    }


def test_the_twin_lookup_has_its_index(at_0014: str) -> None:
    migrate.upgrade(at_0014, "0015")

    async def definition() -> str | None:
        conn = await asyncpg.connect(at_0014)
        try:
            found: str | None = await conn.fetchval(
                "SELECT indexdef FROM pg_indexes WHERE indexname = $1",
                "ix_transactions_counterpart_account",
            )
            return found
        finally:
            await conn.close()

    assert asyncio.run(definition()) == (
        "CREATE INDEX ix_transactions_counterpart_account ON public.transactions USING btree "
        "(counterpart_account_id, end_to_end_id) WHERE (counterpart_account_id IS NOT NULL)"
    )
