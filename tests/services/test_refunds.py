"""The refund service and its ledger moves: the journal entries of each refund, the hold
created in a caller's transaction, a settlement run twice, MED returns, the limits."""

from __future__ import annotations

import uuid
from decimal import Decimal

import httpx
import pytest

from pixgate.db import refunds as refund_rows
from pixgate.domain.errors import RefundAmountExceeded
from pixgate.domain.refunds import Natureza
from pixgate.jobs.worker import drain
from pixgate.ledger import verify
from pixgate.runtime import Runtime
from pixgate.services import payouts, refunds
from tests.helpers import bearer, make_account
from tests.refunds import balance, count_rows, receive, send


async def memos(rt: Runtime, transaction_uuid: uuid.UUID) -> list[tuple[str, str | None, int]]:
    """The journal of one transaction: (memo, book, amount) per posting, in order."""
    async with rt.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT p.memo, p.book, p.amount FROM ledger_postings p "
            "JOIN transactions t ON t.id = p.transaction_id "
            "WHERE t.transaction_id = $1 ORDER BY p.id",
            transaction_uuid,
        )
    return [(r["memo"], r["book"], r["amount"]) for r in rows]


async def received_pix(
    rt: Runtime, client: httpx.AsyncClient, value: str = "100.00"
) -> tuple[int, uuid.UUID]:
    account = await make_account(rt)
    pix = await receive(client, await bearer(client, account), value)
    return account.account_id, uuid.UUID(pix["transactionId"])


async def test_confirmed_refund_holds_then_posts_to_the_settling_bank(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account_id, original = await received_pix(rt, client)
    refund = await refunds.refund_in(
        rt, account_id, original, refunds.RefundOrder(amount=2500, external_id="svc1")
    )
    await drain(rt)
    assert await memos(rt, refund.transaction_id) == [
        ("hold", "available", -2500),
        ("hold", "blocked", 2500),
        ("post", "blocked", -2500),
        ("post", "settlement", 2500),
        ("post", "fees", 0),
    ]
    assert await balance(rt, account_id) == (7500, 0)
    async with rt.db.connection() as conn:
        assert await verify.problems(conn) == []


async def test_failed_refund_holds_then_voids(rt: Runtime, client: httpx.AsyncClient) -> None:
    account_id, original = await received_pix(rt, client)
    refund = await refunds.refund_in(
        rt,
        account_id,
        original,
        refunds.RefundOrder(amount=2500, external_id="svc2"),
        scenario="SETTLEMENT_TIMEOUT",
    )
    await drain(rt)
    assert await memos(rt, refund.transaction_id) == [
        ("hold", "available", -2500),
        ("hold", "blocked", 2500),
        ("void", "blocked", -2500),
        ("void", "available", 2500),
    ]
    assert await balance(rt, account_id) == (10000, 0)


async def test_a_voided_refund_gives_back_no_limit_usage(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    await send(rt, client, headers, "10.00")
    pix = await receive(client, headers, "50.00")
    async with rt.db.connection() as conn:
        usage = await conn.fetchval("SELECT sum(used) FROM limit_usage")
    assert usage == 1000
    await refunds.refund_in(
        rt,
        account.account_id,
        uuid.UUID(pix["transactionId"]),
        refunds.RefundOrder(amount=5000, external_id="svc3"),
        scenario="ORDER_REJECTED",
    )
    await drain(rt)
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT sum(used) FROM limit_usage") == usage


async def test_settling_twice_has_no_second_effect(rt: Runtime, client: httpx.AsyncClient) -> None:
    account_id, original = await received_pix(rt, client)
    refund = await refunds.refund_in(
        rt, account_id, original, refunds.RefundOrder(amount=1000, external_id="svc4")
    )
    await payouts.settle(rt, refund.id)
    await payouts.settle(rt, refund.id)
    assert len(await memos(rt, refund.transaction_id)) == 5
    assert await count_rows(rt, f"events WHERE transaction_id = {refund.id}") == 1


async def test_create_in_a_callers_transaction_rolls_back_with_it(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account_id, original = await received_pix(rt, client)
    async with rt.db.connection() as conn:
        original_id = await conn.fetchval(
            "SELECT id FROM transactions WHERE transaction_id = $1", original
        )

    class Abandoned(Exception):
        pass

    with pytest.raises(Abandoned):
        async with rt.db.begin() as conn:
            made = await refund_rows.create(
                conn,
                refund_rows.NewRefund(
                    account_id=account_id,
                    original_id=original_id,
                    kind="med",
                    external_id=None,
                    amount=4000,
                    end_to_end_id="D12345678202611241000abcdefghijk",
                    description=None,
                    natureza=Natureza.MED_FRAUDE,
                    created_at=rt.clock.now(),
                    run_at=rt.clock.now(),
                    window_days=None,
                    timezone=rt.settings.timezone,
                    details={},
                ),
            )
            assert made is not None and made.natureza == "MED_FRAUDE"
            assert made.status == "PENDING" and made.original_id == original_id
            raise Abandoned
    assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 0
    assert await count_rows(rt, "jobs") == 0
    assert await balance(rt, account_id) == (10000, 0)


async def test_med_return_takes_at_most_what_is_left(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account_id, original = await received_pix(rt, client)
    await refunds.refund_in(
        rt, account_id, original, refunds.RefundOrder(amount=7000, external_id="svc5")
    )
    async with rt.db.begin() as conn:
        original_id = await conn.fetchval(
            "SELECT id FROM transactions WHERE transaction_id = $1", original
        )
        first = await refunds.return_for_med(
            conn,
            rt,
            account_id,
            original_id=original_id,
            amount=5000,
            nature="MED_OPERACIONAL",
            case_id=7,
        )
        nothing = await refunds.return_for_med(
            conn,
            rt,
            account_id,
            original_id=original_id,
            amount=100,
            nature="MED_FRAUDE",
            case_id=8,
        )
    assert first is not None and nothing is None
    await drain(rt)
    async with rt.db.connection() as conn:
        med = await refund_rows.get(conn, account_id, first)
    assert med is not None
    assert (med.kind, med.amount, med.natureza, med.status) == (
        "med",
        3000,
        "MED_OPERACIONAL",
        "CONFIRMED",
    )
    assert await balance(rt, account_id) == (0, 0)


async def test_the_refusal_carries_what_is_left(rt: Runtime, client: httpx.AsyncClient) -> None:
    account_id, original = await received_pix(rt, client, "10.00")
    with pytest.raises(RefundAmountExceeded) as refused:
        await refunds.refund_in(
            rt, account_id, original, refunds.RefundOrder(amount=1001, external_id="svc6")
        )
    assert refused.value.details == {"refundable": float(Decimal("10.00"))}
