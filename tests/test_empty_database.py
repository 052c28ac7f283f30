"""The per-test reset (`tests/helpers.py` `empty_database`): every row gone but the kept
tables', every identity back at its start."""

from __future__ import annotations

import httpx

from pixgate.runtime import Runtime
from tests.helpers import KEEP_TABLES, bearer, empty_database, make_account
from tests.support import drain

CPF = "52998224725"


async def row_counts(rt: Runtime) -> dict[str, int]:
    async with rt.db.connection() as conn:
        tables = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {
            t["tablename"]: int(await conn.fetchval(f'SELECT count(*) FROM "{t["tablename"]}"'))
            for t in tables
        }


async def test_every_row_goes_but_the_kept_tables_and_ids_start_again(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    payer = {"fullName": "Fulano", "document": CPF}
    transaction = {"value": 10, "description": "x", "externalId": "reset-1"}
    charge = await client.post(
        "/api/pix/cash-in", headers=headers, json={"transaction": transaction, "payer": payer}
    )
    assert charge.status_code == 201, charge.text
    paid = await client.post(
        "/sandbox/pix/pay",
        headers=headers,
        json={"pixCode": charge.json()["pixCode"], "payer": {"name": "Fulano", "document": CPF}},
    )
    assert paid.status_code == 201, paid.text
    await drain(rt)
    before = await row_counts(rt)
    assert before["accounts"] and before["transactions"] and before["charges"], before

    await empty_database(rt)

    after = await row_counts(rt)
    assert {t: n for t, n in after.items() if n and t not in KEEP_TABLES} == {}
    assert {t: after[t] for t in KEEP_TABLES} == {t: before[t] for t in KEEP_TABLES}
    again = await make_account(rt)
    assert again.account_id == 1
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT min(id) FROM transactions") is None
        assert await conn.fetchval("SELECT nextval('transactions_id_seq')") == 1
