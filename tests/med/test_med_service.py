"""med.service, called directly: a case taken in blocks the disputed PIX, an approval turns
the block into a refund, a rejection or a cancellation releases it; an ended case is final,
and of two analyses at once exactly one wins."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from pixgate.charges.service import charges, cob
from pixgate.core.errors import Conflict, NotFound
from pixgate.core.ids import new_end_to_end_id, new_txid
from pixgate.ledger.service import verify
from pixgate.med import service as med
from pixgate.med.rules import AnalysisResult, MedCase, MedReason, MedStatus
from pixgate.payouts.service import cash_out_qrcode
from pixgate.payouts.service import settlement as payouts
from pixgate.runtime import Runtime
from tests.charges.test_charges_service import PAYER
from tests.helpers import footprint, make_account
from tests.refunds.helpers import balance
from tests.refunds.test_refunds_service import memos

CREDITED = [
    ("credit", "settlement", -10000),
    ("credit", "available", 10000),
    ("credit", "fees", 0),
]
BLOCKED = [("hold", "available", -10000), ("hold", "blocked", 10000)]
RELEASED = [("void", "blocked", -10000), ("void", "available", 10000)]


async def disputed(rt: Runtime) -> tuple[int, charges.Received, MedCase]:
    """An account with 10.00 that received a 100.00 PIX, and a case opened against it."""
    account = await make_account(rt, balance="10.00")
    received = await charges.sandbox_incoming(rt, account.account_id, Decimal("100.00"), PAYER)
    case = await med.request(rt, account.account_id, request(received.end_to_end_id))
    return account.account_id, received, case


def request(
    end_to_end_id: str, reason: MedReason = MedReason.REFUND_REQUEST, cause: str | None = "SCAM"
) -> med.CaseRequest:
    return med.CaseRequest(
        end_to_end_id=end_to_end_id, reason=reason, cause=cause, description="golpe"
    )


async def test_a_case_on_a_received_pix_blocks_it(rt: Runtime) -> None:
    account_id, received, case = await disputed(rt)
    assert (case.status, case.blocked_amount) == (MedStatus.RECEIVED, 10000)
    assert case.original is not None and case.original.id == received.id
    assert await balance(rt, account_id) == (1000, 10000)
    assert await memos(rt, received.transaction_id) == [*CREDITED, *BLOCKED]
    async with rt.db.connection() as conn:
        assert await verify.problems(conn) == []


async def test_the_block_stops_at_the_available_balance(rt: Runtime) -> None:
    account = await make_account(rt)
    received = await charges.sandbox_incoming(rt, account.account_id, Decimal("100.00"), PAYER)
    async with rt.db.begin() as conn:  # 70.00 of it paid out meanwhile
        await conn.execute("SELECT ledger_hold($1, 7000, NULL)", account.account_id)
        await conn.execute("SELECT ledger_post($1, 7000, 0, NULL)", account.account_id)
    case = await med.request(rt, account.account_id, request(received.end_to_end_id))
    assert case.blocked_amount == 3000
    assert await balance(rt, account.account_id) == (0, 3000)


async def test_an_unknown_pix_opens_a_case_that_blocks_nothing(rt: Runtime) -> None:
    account = await make_account(rt, balance="10.00")
    case = await med.request(
        rt, account.account_id, request(new_end_to_end_id("60701190", rt.clock.now()))
    )
    assert (case.status, case.blocked_amount, case.original) == (MedStatus.OPEN, 0, None)
    assert await balance(rt, account.account_id) == (1000, 0)


async def test_approval_turns_the_block_into_a_refund_to_the_payer(rt: Runtime) -> None:
    account_id, received, case = await disputed(rt)
    analysed = await med.analyse(rt, account_id, case.id, AnalysisResult.APPROVED, "ok")
    assert (analysed.status, analysed.analysis_result) == (
        MedStatus.ANALYZED,
        AnalysisResult.APPROVED,
    )
    assert analysed.refund_transaction_id is not None
    # the block became the refund's hold: nothing reached `available` in between
    assert await balance(rt, account_id) == (1000, 10000)
    assert await memos(rt, received.transaction_id) == [*CREDITED, *BLOCKED, *RELEASED]
    await payouts.settle(rt, analysed.refund_transaction_id)
    assert await balance(rt, account_id) == (1000, 0)
    async with rt.db.connection() as conn:
        refund = await conn.fetchrow(
            "SELECT * FROM transactions WHERE id = $1", analysed.refund_transaction_id
        )
        assert await verify.problems(conn) == []
    assert refund is not None
    assert (refund["operation"], refund["kind"], refund["status"], refund["amount"]) == (
        "REFUND_IN",
        "med",
        "CONFIRMED",
        10000,
    )
    assert (refund["parent_id"], refund["details"]["natureza"]) == (received.id, "MED_FRAUDE")
    assert await memos(rt, refund["transaction_id"]) == [
        ("hold", "available", -10000),
        ("hold", "blocked", 10000),
        ("post", "blocked", -10000),
        ("post", "settlement", 10000),
        ("post", "fees", 0),
    ]


async def test_approval_on_a_pix_our_account_paid_credits_that_account(rt: Runtime) -> None:
    """The payer of the disputed PIX is one of our accounts (it paid the receiver's cob with a
    QR cash-out): the approved case's refund is returned in the house when it settles."""
    payer = await make_account(rt, name="Pagadora", balance="100.00")
    receiver = await make_account(rt, name="Recebedora", balance="10.00")
    txid = new_txid(32)
    made = await cob.create(
        rt, receiver.account_id, txid, cob.CobInput(expiracao=3600, original="40.00")
    )
    order = cash_out_qrcode.QrCashOutOrder(
        value=Decimal("40.00"), qr_code=made.charge.pix_code, external_id="qr1"
    )
    await cash_out_qrcode.create(rt, payer.account_id, order)
    payment = (await cob.get(rt, receiver.account_id, txid)).payment
    assert payment is not None and payment.end_to_end_id is not None
    case = await med.request(rt, receiver.account_id, request(payment.end_to_end_id))
    assert case.blocked_amount == 4000
    analysed = await med.analyse(rt, receiver.account_id, case.id, AnalysisResult.APPROVED, None)
    assert analysed.refund_transaction_id is not None
    await payouts.settle(rt, analysed.refund_transaction_id)
    assert await balance(rt, receiver.account_id) == (1000, 0)
    assert await balance(rt, payer.account_id) == (10000, 0)
    async with rt.db.connection() as conn:
        credit = await conn.fetchrow(
            "SELECT * FROM transactions WHERE operation = 'REFUND_OUT' AND account_id = $1",
            payer.account_id,
        )
        refund = await conn.fetchrow(
            "SELECT * FROM transactions WHERE id = $1", analysed.refund_transaction_id
        )
        assert await verify.problems(conn) == []
    assert refund is not None and credit is not None
    assert (refund["status"], refund["kind"]) == ("CONFIRMED", "med")
    assert (credit["status"], credit["amount"], credit["end_to_end_id"]) == (
        "CONFIRMED",
        4000,
        refund["end_to_end_id"],
    )


async def test_rejection_releases_the_block(rt: Runtime) -> None:
    account_id, received, case = await disputed(rt)
    analysed = await med.analyse(rt, account_id, case.id, AnalysisResult.REJECTED, None)
    assert (analysed.status, analysed.refund_transaction_id) == (MedStatus.ANALYZED, None)
    assert await balance(rt, account_id) == (11000, 0)
    assert await memos(rt, received.transaction_id) == [*CREDITED, *BLOCKED, *RELEASED]


async def test_cancellation_releases_the_block(rt: Runtime) -> None:
    account_id, received, case = await disputed(rt)
    cancelled = await med.request(
        rt, account_id, request(received.end_to_end_id, MedReason.REFUND_CANCELLATION, None)
    )
    assert (cancelled.id, cancelled.status) == (case.id, MedStatus.CANCELLED)
    assert cancelled.reason == MedReason.REFUND_CANCELLATION
    assert await balance(rt, account_id) == (11000, 0)
    assert await memos(rt, received.transaction_id) == [*CREDITED, *BLOCKED, *RELEASED]


class TestConflicts:
    async def test_one_case_at_a_time_per_pix(self, rt: Runtime) -> None:
        account_id, received, _ = await disputed(rt)
        before = await footprint(rt)
        with pytest.raises(Conflict):
            await med.request(rt, account_id, request(received.end_to_end_id))
        assert await footprint(rt) == before
        assert await balance(rt, account_id) == (1000, 10000)

    @pytest.mark.parametrize("first", list(AnalysisResult))
    async def test_an_ended_case_cannot_be_analysed_again(
        self, rt: Runtime, first: AnalysisResult
    ) -> None:
        account_id, _, case = await disputed(rt)
        await med.analyse(rt, account_id, case.id, first, None)
        before, money = await footprint(rt), await balance(rt, account_id)
        for result in AnalysisResult:
            with pytest.raises(Conflict, match="already ANALYZED"):
                await med.analyse(rt, account_id, case.id, result, None)
        assert (await footprint(rt), await balance(rt, account_id)) == (before, money)

    async def test_a_cancelled_case_cannot_be_analysed(self, rt: Runtime) -> None:
        account_id, received, case = await disputed(rt)
        await med.request(
            rt, account_id, request(received.end_to_end_id, MedReason.REFUND_CANCELLATION, None)
        )
        with pytest.raises(Conflict, match="already CANCELLED"):
            await med.analyse(rt, account_id, case.id, AnalysisResult.APPROVED, None)
        assert await balance(rt, account_id) == (11000, 0)

    async def test_two_analyses_at_once_one_wins(self, rt: Runtime) -> None:
        """The case's row lock orders them: the second sees the case ended and refuses."""
        account_id, _, case = await disputed(rt)
        outcomes = await asyncio.gather(
            med.analyse(rt, account_id, case.id, AnalysisResult.APPROVED, None),
            med.analyse(rt, account_id, case.id, AnalysisResult.REJECTED, None),
            return_exceptions=True,
        )
        [won] = [o for o in outcomes if isinstance(o, MedCase)]
        assert [type(o) for o in outcomes if not isinstance(o, MedCase)] == [Conflict]
        approved = won.analysis_result == AnalysisResult.APPROVED
        assert await balance(rt, account_id) == ((1000, 10000) if approved else (11000, 0))
        async with rt.db.connection() as conn:
            refunds = await conn.fetchval(
                "SELECT count(*) FROM transactions WHERE operation = 'REFUND_IN'"
            )
        assert refunds == (1 if approved else 0)

    async def test_another_accounts_case_or_a_missing_one_is_not_found(self, rt: Runtime) -> None:
        account_id, received, case = await disputed(rt)
        stranger = await make_account(rt, name="Outra Loja")
        with pytest.raises(NotFound):
            await med.analyse(rt, stranger.account_id, case.id, AnalysisResult.APPROVED, None)
        with pytest.raises(NotFound):
            await med.request(
                rt,
                stranger.account_id,
                request(received.end_to_end_id, MedReason.REFUND_CANCELLATION, None),
            )
        assert await balance(rt, account_id) == (1000, 10000)


async def test_cases_opened_at_once_on_one_account_do_not_deadlock(rt: Runtime) -> None:
    """Opening a case inserts rows that reference the account and the PIX (foreign keys take
    a key-share lock on both) before it locks them to block the money: had that lock been FOR
    UPDATE, which waits for key-share locks, two cases opened at once on one account would each
    wait for the other's (the soak, bench/soak.py, met it)."""
    account = await make_account(rt, balance="0.00")
    received = [
        await charges.sandbox_incoming(rt, account.account_id, Decimal("10.00"), PAYER)
        for _ in range(12)
    ]
    cases = await asyncio.gather(
        *(med.request(rt, account.account_id, request(r.end_to_end_id)) for r in received)
    )
    assert [c.status for c in cases] == [MedStatus.RECEIVED] * 12
    assert await balance(rt, account.account_id) == (0, 12000)
    async with rt.db.connection() as conn:
        assert await verify.problems(conn) == []
