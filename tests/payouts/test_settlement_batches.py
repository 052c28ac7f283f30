"""`settle_payouts()` (pixgate/payouts/sql/040_payouts.sql): a batch of one account's
settlements written together, with the same effects as one at a time, and a payout that
cannot settle refused alone. Driven on real PostgreSQL with the statement the worker sends."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from pixgate.core.db.pool import Connection
from pixgate.jobs.public import DELIVER_WEBHOOK
from pixgate.runtime import Runtime
from tests.helpers import balance, bearer, make_account, waiting_for_a_lock

PATH = "/api/pix/cash-out"
EVP = "123e4567-e12b-42d3-a456-426614174000"
CPF = "52998224725"
T = TypeVar("T")


async def pending_cash_outs(
    rt: Runtime, client: httpx.AsyncClient, count: int, balance_brl: str
) -> tuple[int, list[int]]:
    """An account with `count` PENDING cash-outs of R$ 10.00: its id and theirs."""
    account = await make_account(rt, balance=balance_brl)
    headers = await bearer(client, account)
    ids = []
    for _ in range(count):
        response = await client.post(
            PATH,
            headers=headers,
            json={
                "value": 10,
                "externalId": f"ext-{uuid.uuid4()}",
                "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
            },
        )
        assert response.status_code == 201, response.text
        async with rt.db.connection() as conn:
            ids.append(
                await conn.fetchval(
                    "SELECT id FROM transactions WHERE transaction_id = $1::uuid",
                    response.json()["transactionId"],
                )
            )
    return account.account_id, ids


async def settle(conn: Any, ids: list[int], statuses: list[str]) -> list[Any]:
    """The worker's statement for these settlements, its rows in order."""
    now = datetime.now(UTC)
    return list(
        await conn.fetch(
            "SELECT * FROM settle_payouts($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
            " ORDER BY ord",
            ids,
            statuses,
            [f"E{i:031d}" for i in ids],
            [None] * len(ids),
            [None] * len(ids),
            [None] * len(ids),
            [None if s == "CONFIRMED" else "ORDER_REJECTED" for s in statuses],
            [None if s == "CONFIRMED" else "rejected" for s in statuses],
            [now] * len(ids),
            ["cash_out"] * len(ids),
            DELIVER_WEBHOOK.name,
            DELIVER_WEBHOOK.max_attempts,
        )
    )


async def settle_behind(
    first: Connection,
    second: Connection,
    locking: Awaitable[T],
    ids: list[int],
    statuses: list[str],
) -> tuple[T, list[Any]]:
    """`locking` in a transaction of `first`, then the worker's statement for `ids` on
    `second`, which waits for rows `locking` locked until that transaction commits: the
    results of both."""
    async with first.transaction():
        held = await locking
        late = asyncio.create_task(settle(second, ids, statuses))
        await waiting_for_a_lock(first, second.get_server_pid())
    return held, await late


async def statuses_of(conn: Any, ids: list[int]) -> dict[int, str]:
    rows = await conn.fetch("SELECT id, status FROM transactions WHERE id = ANY($1)", ids)
    return {row["id"]: row["status"] for row in rows}


async def test_a_batch_posts_and_voids_each_payout_once(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account_id, (a, b, c, d) = await pending_cash_outs(rt, client, 4, "50.00")
    async with rt.db.connection() as conn:
        rows = await settle(conn, [a, b, c, a], ["CONFIRMED", "ERROR", "CONFIRMED", "ERROR"])
        assert [(r["status"], r["err_state"]) for r in rows] == [
            ("CONFIRMED", None),
            ("ERROR", None),
            ("CONFIRMED", None),
            (None, None),  # asked twice: its first element settled it
        ]
        assert {r["account_id"] for r in rows[:3]} == {account_id}
        statuses = await statuses_of(conn, [a, b, c, d])
        assert statuses == {a: "CONFIRMED", b: "ERROR", c: "CONFIRMED", d: "PENDING"}
        memos = await conn.fetch(
            "SELECT transaction_id, memo, count(*) AS n, count(DISTINCT entry_id) AS entries"
            " FROM ledger_postings WHERE transaction_id = ANY($1) AND memo <> 'hold'"
            " GROUP BY 1, 2 ORDER BY 1",
            [a, b, c, d],
        )
        assert [tuple(m) for m in memos] == [
            (a, "post", 3, 1),
            (b, "void", 2, 1),
            (c, "post", 3, 1),
        ]
        events = await conn.fetchval(
            "SELECT count(*) FROM events WHERE transaction_id = ANY($1)", [a, b, c, d]
        )
        assert events == 3
        used = await conn.fetchval(
            "SELECT sum(used) FROM limit_usage WHERE account_id = $1", account_id
        )
        assert used == 3000  # a, c and the pending d still count; b's hold was given back
    # 50.00 - 4 held + b's 10.00 back; d still held
    assert await balance(rt, account_id) == (2000, 1000)


async def test_a_batch_delivers_each_event_to_every_endpoint(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account_id, ids = await pending_cash_outs(rt, client, 3, "30.00")
    async with rt.db.connection() as conn:
        for path in ("/one", "/two"):
            await conn.execute(
                "INSERT INTO webhook_endpoints (account_id, event_type, url, headers, version)"
                " VALUES ($1, 'cash_out', $2, '[]', 'v1')",
                account_id,
                f"https://hooks.example.com{path}",
            )
        rows = await settle(conn, ids, ["CONFIRMED"] * 3)
        assert [(r["status"], r["jobs"]) for r in rows] == [("CONFIRMED", 2)] * 3
        delivered = await conn.fetch(
            "SELECT e.transaction_id, e.data -> 'payment' ->> 'id' AS fact,"
            " array_agg(d.url ORDER BY d.url) AS urls,"
            " count(DISTINCT d.message_id) AS messages,"
            " count(j.id) AS jobs"
            " FROM events e JOIN webhook_deliveries d ON d.event_id = e.id"
            " JOIN jobs j ON j.args ->> 'delivery_id' = d.id::text"
            " WHERE e.transaction_id = ANY($1) GROUP BY 1, 2 ORDER BY 1",
            ids,
        )
    urls = ["https://hooks.example.com/one", "https://hooks.example.com/two"]
    assert [tuple(r) for r in delivered] == [(i, str(i), urls, 2, 2) for i in ids]


async def test_a_batch_records_its_events_in_order_each_with_its_own_facts(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    _, ids = await pending_cash_outs(rt, client, 3, "30.00")
    statuses = ["ERROR", "CONFIRMED", "ERROR"]
    order = [ids[2], ids[0], ids[1]]
    async with rt.db.connection() as conn:
        rows = await settle(conn, order, statuses)
        assert [r["status"] for r in rows] == statuses
        events = await conn.fetch(
            "SELECT transaction_id, data -> 'payment' ->> 'id' AS id,"
            " data -> 'payment' ->> 'status' AS status,"
            " data -> 'payment' ->> 'endToEndId' AS e2e,"
            " data -> 'original' AS original, data ->> 'version' AS version"
            " FROM events e WHERE transaction_id = ANY($1) ORDER BY e.id",
            ids,
        )
    assert [tuple(e) for e in events] == [
        (i, str(i), status, f"E{i:031d}", None, "1")
        for i, status in zip(order, statuses, strict=True)
    ]


async def test_a_batch_moves_the_account_row_once(rt: Runtime, client: httpx.AsyncClient) -> None:
    account_id, ids = await pending_cash_outs(rt, client, 3, "30.00")
    # the backend's counts not yet published, which may hold earlier statements' too
    updated = "SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relname = 'accounts'"
    async with rt.db.connection() as conn, conn.transaction():
        before = await conn.fetchval(updated) or 0
        rows = await settle(conn, ids, ["CONFIRMED"] * 3)
        assert [r["status"] for r in rows] == ["CONFIRMED"] * 3
        after = await conn.fetchval(updated)
    assert after - before == 1
    assert await balance(rt, account_id) == (0, 0)


async def test_a_payout_that_cannot_settle_is_refused_alone(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account_id, (a, b, c) = await pending_cash_outs(rt, client, 3, "30.00")
    async with rt.db.connection() as conn:
        rows = await settle(conn, [a, b, c], ["CONFIRMED", "LOST", "CONFIRMED"])
        assert [r["status"] for r in rows] == ["CONFIRMED", None, "CONFIRMED"]
        assert rows[1]["err_state"] == "23514"  # the status CHECK
        statuses = await statuses_of(conn, [a, b, c])
    assert statuses == {a: "CONFIRMED", b: "PENDING", c: "CONFIRMED"}
    assert await balance(rt, account_id) == (0, 1000)


async def test_two_batches_of_the_same_payouts_settle_each_once(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    # two more held, so that the balance's own guard would not catch a second settlement
    account_id, (a, b, _, _) = await pending_cash_outs(rt, client, 4, "40.00")
    async with rt.db.connection() as first, rt.db.connection() as second:
        # the second batch waits for the first's locks on the payouts it settles
        won, lost = await settle_behind(
            first,
            second,
            settle(first, [a, b], ["CONFIRMED", "CONFIRMED"]),
            [b, a],
            ["ERROR", "ERROR"],
        )
        statuses = await statuses_of(first, [a, b])
        events = await first.fetchval(
            "SELECT count(*) FROM events WHERE transaction_id = ANY($1)", [a, b]
        )
        memos = await first.fetch(
            "SELECT memo, count(*) FROM ledger_postings WHERE transaction_id = ANY($1)"
            " GROUP BY 1 ORDER BY 1",
            [a, b],
        )
    assert [r["status"] for r in won] == ["CONFIRMED", "CONFIRMED"]
    assert [(r["status"], r["err_state"]) for r in lost] == [(None, None), (None, None)]
    assert statuses == {a: "CONFIRMED", b: "CONFIRMED"}
    assert events == 2
    assert [tuple(m) for m in memos] == [("hold", 4), ("post", 6)]
    assert await balance(rt, account_id) == (0, 2000)


async def test_a_batch_whose_payout_changed_meanwhile_settles_one_by_one(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account_id, (a, b, _) = await pending_cash_outs(rt, client, 3, "30.00")
    async with rt.db.connection() as first, rt.db.connection() as second:
        # a change that leaves the payout PENDING, committed while the batch waits for it
        _, rows = await settle_behind(
            first,
            second,
            first.execute("UPDATE transactions SET description = 'meanwhile' WHERE id = $1", a),
            [a, b],
            ["CONFIRMED", "CONFIRMED"],
        )
        statuses = await statuses_of(first, [a, b])
        events = await first.fetchval(
            "SELECT count(*) FROM events WHERE transaction_id = ANY($1)", [a, b]
        )
    assert [(r["status"], r["err_state"]) for r in rows] == [("CONFIRMED", None)] * 2
    assert statuses == {a: "CONFIRMED", b: "CONFIRMED"}
    assert events == 2
    assert await balance(rt, account_id) == (0, 1000)
