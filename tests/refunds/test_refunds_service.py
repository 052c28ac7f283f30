"""The refund service and its ledger moves: the journal entries of each refund, the hold
created in a caller's transaction, a settlement run twice, MED returns, the limits."""

from __future__ import annotations

import asyncio
import uuid
from decimal import Decimal

import httpx
import pytest

from pixgate.core.errors import RefundAmountExceeded
from pixgate.ledger.service import verify
from pixgate.med import service as med
from pixgate.med.rules import AnalysisResult, MedCase, MedReason
from pixgate.payouts.service import settlement as payouts
from pixgate.provider.base import Instructions
from pixgate.refunds import service as refunds
from pixgate.refunds.queries import refunds as refund_rows
from pixgate.refunds.rules import Natureza
from pixgate.runtime import Runtime
from tests.charges.test_cash_in import create_charge
from tests.helpers import bearer, make_account
from tests.refunds.helpers import balance, count_rows, paid_by_our_account, receive, send, stored
from tests.support import drain


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
        instructions=Instructions("SETTLEMENT_TIMEOUT"),
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
        instructions=Instructions("ORDER_REJECTED"),
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


class TestPaidByOurAccount:
    """A PIX another of our accounts paid (a QR payment of a charge) is returned in the house:
    the refund and the payer's credit settle in one transaction, never through the bank."""

    async def test_the_payer_is_credited_with_a_refund_out(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        pix = await paid_by_our_account(rt, client, "40.00")
        refund = await refunds.refund_in(
            rt,
            pix.receiver_id,
            uuid.UUID(pix.transaction_id),
            refunds.RefundOrder(amount=4000, external_id="casa1"),
        )
        assert refund.status == "PENDING"
        assert await balance(rt, pix.receiver_id) == (0, 4000)
        await drain(rt)
        assert await balance(rt, pix.receiver_id) == (0, 0)
        assert await balance(rt, pix.payer_id) == (10000, 0)
        async with rt.db.connection() as conn:
            settled = await refund_rows.get(conn, pix.receiver_id, refund.id)
            [credit] = await conn.fetch(
                "SELECT * FROM transactions WHERE operation = 'REFUND_OUT' AND account_id = $1",
                pix.payer_id,
            )
            withdraw_id = await conn.fetchval(
                "SELECT id FROM transactions WHERE transaction_id = $1::uuid", pix.withdraw_id
            )
            events = await conn.fetch("SELECT account_id, type, transaction_id FROM events")
            books: dict[str, int] = {
                r["book"]: r["total"]
                for r in await conn.fetch(
                    "SELECT book, sum(amount) AS total FROM ledger_postings "
                    "WHERE account_id IS NULL GROUP BY book"
                )
            }
        assert settled is not None and settled.status == "CONFIRMED"
        assert (credit["status"], credit["amount"], credit["fee"], credit["parent_id"]) == (
            "CONFIRMED",
            4000,
            0,
            withdraw_id,
        )
        # one return, one end-to-end id for both sides, as the payment itself
        assert credit["end_to_end_id"] == settled.end_to_end_id
        assert await memos(rt, refund.transaction_id) == [
            ("hold", "available", -4000),
            ("hold", "blocked", 4000),
            ("post", "blocked", -4000),
            ("post", "settlement", 4000),
            ("post", "fees", 0),
        ]
        assert await memos(rt, credit["transaction_id"]) == [
            ("credit", "settlement", -4000),
            ("credit", "available", 4000),
            ("credit", "fees", 0),
        ]
        assert books["settlement"] == 0  # nothing left the house
        refund_events = {(e["account_id"], e["type"], e["transaction_id"]) for e in events}
        assert (pix.receiver_id, "refund_in", refund.id) in refund_events
        assert (pix.payer_id, "refund_out", credit["id"]) in refund_events

    async def test_a_settlement_error_scenario_does_not_apply(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        pix = await paid_by_our_account(rt, client, "40.00")
        await refunds.refund_in(
            rt,
            pix.receiver_id,
            uuid.UUID(pix.transaction_id),
            refunds.RefundOrder(amount=1500, external_id="casa2"),
            instructions=Instructions("ORDER_REJECTED"),
        )
        await drain(rt)
        assert await balance(rt, pix.receiver_id) == (2500, 0)
        assert await balance(rt, pix.payer_id) == (7500, 0)

    async def test_settling_twice_or_at_once_has_no_second_effect(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        pix = await paid_by_our_account(rt, client, "40.00")
        refund = await refunds.refund_in(
            rt,
            pix.receiver_id,
            uuid.UUID(pix.transaction_id),
            refunds.RefundOrder(amount=1000, external_id="casa3"),
        )
        await asyncio.gather(payouts.settle(rt, refund.id), payouts.settle(rt, refund.id))
        await payouts.settle(rt, refund.id)
        assert len(await memos(rt, refund.transaction_id)) == 5
        assert await count_rows(rt, f"events WHERE transaction_id = {refund.id}") == 1
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_OUT'") == 1
        assert await count_rows(rt, "events WHERE type = 'refund_out'") == 1
        assert await balance(rt, pix.payer_id) == (7000, 0)

    async def test_crossing_refunds_and_disputes_do_not_deadlock(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """A paid B and B paid A; B's and A's refunds settle at once, while B refunds more of
        the same PIX and a MED case is opened against A's: every path locks the PIX, then
        the payer's payment, then the accounts by ascending id, so they wait, never deadlock."""
        for _ in range(3):
            ab = await paid_by_our_account(rt, client, "40.00", receiver_balance="100.00")
            a, b = ab.payer_id, ab.receiver_id
            ba_charge = await create_charge(client, ab.payer_headers, value="30.00")
            paid = await client.post(
                "/api/pix/cash-out-qrcode",
                json={"qrCode": ba_charge["pixCode"], "value": "30.00", "externalId": "ba"},
                headers=ab.receiver_headers,
            )
            assert paid.status_code == 201, paid.text
            ba = uuid.UUID(ba_charge["transactionId"])
            ab_pix = uuid.UUID(ab.transaction_id)
            assert await balance(rt, a) == (9000, 0) and await balance(rt, b) == (11000, 0)
            # B returns 20.00 of A's payment in four parts, A 15.00 of B's in three
            made = [
                await refunds.refund_in(
                    rt, who, pix, refunds.RefundOrder(amount=500, external_id=f"r{n}")
                )
                for n, (who, pix) in enumerate([(b, ab_pix)] * 4 + [(a, ba)] * 3)
            ]
            e2e = (await stored(rt, str(ba)))["end_to_end_id"]
            opening = med.CaseRequest(
                end_to_end_id=e2e, reason=MedReason.REFUND_REQUEST, cause="SCAM", description=None
            )
            *_, case = await asyncio.gather(  # the settlements, a refund, a case: at once
                *(payouts.settle(rt, r.id) for r in made),
                refunds.refund_in(
                    rt, b, ab_pix, refunds.RefundOrder(amount=1000, external_id="more")
                ),
                med.request(rt, a, opening),
            )
            assert isinstance(case, MedCase)
            assert case.blocked_amount == 1500  # what was left of B's payment to A
            await drain(rt)
            assert await balance(rt, a) == (9000 - 1500 + 2000 + 1000 - 1500, 1500)
            assert await balance(rt, b) == (11000 - 2000 - 1000 + 1500, 0)
            await med.analyse(rt, a, case.id, AnalysisResult.APPROVED, None)
            await drain(rt)
            assert await balance(rt, a) == (9000, 0)
            assert await balance(rt, b) == (11000, 0)

    async def test_a_payment_already_returned_to_its_payer_ends_the_refund_in_error(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """Should the payer's cash-out have been returned already (a return recorded on it
        from outside, which the sandbox no longer accepts for an internal PIX), the refund
        cannot credit it: it ends in ERROR, its hold voided, instead of waiting forever."""
        pix = await paid_by_our_account(rt, client, "40.00")
        async with rt.db.begin() as conn:
            await conn.execute(
                "SELECT refund_credit($1, t.id, 4000, $2, now(), 'webhook.deliver', 1, NULL) "
                "FROM transactions t WHERE t.transaction_id = $3::uuid",
                pix.payer_id,
                "D12345678202611241000abcdefghijk",
                pix.withdraw_id,
            )
        refund = await refunds.refund_in(
            rt,
            pix.receiver_id,
            uuid.UUID(pix.transaction_id),
            refunds.RefundOrder(amount=1000, external_id="casa4"),
        )
        await drain(rt)
        async with rt.db.connection() as conn:
            settled = await refund_rows.get(conn, pix.receiver_id, refund.id)
        assert settled is not None
        assert (settled.status, settled.error_code) == ("ERROR", "ORDER_REJECTED")
        assert await balance(rt, pix.receiver_id) == (4000, 0)
        assert await balance(rt, pix.payer_id) == (10000, 0)
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_OUT'") == 1
