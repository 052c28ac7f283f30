"""The ledger model's rules that return money: refunds of both families, refunds
received, and MED cases."""

from __future__ import annotations

import uuid

from hypothesis import strategies as st
from hypothesis.stateful import (
    precondition,
    rule,
)

from pixgate.core.errors import (
    Conflict,
    DevolucaoDeadlineExceeded,
    DevolucaoInsufficientBalance,
    InsufficientBalance,
    NotFound,
    PixgateError,
    RefundAmountExceeded,
    RefundDeadlineExceeded,
    ValidationFailed,
)
from pixgate.core.ids import new_end_to_end_id
from pixgate.core.labels import TransactionStatus
from pixgate.med import service as med
from pixgate.med.rules import AnalysisResult, MedReason, MedStatus
from pixgate.provider.base import Instructions
from pixgate.refunds import service as refunds
from pixgate.sandbox.rules import SETTLEMENT_ERRORS
from tests.ledger.model_base import LedgerModel
from tests.ledger.model_world import (
    AMOUNT,
    PICK,
    SETTLEMENT_ERROR,
    Case,
    Pending,
    _request,
    amount_from,
    cents,
    pick_from,
)


class ReturnRules(LedgerModel):
    # --- refunds --------------------------------------------------------------------------

    @precondition(lambda self: self.received)
    @rule(
        pick=PICK,
        spec=AMOUNT,
        near_balance=st.booleans(),
        scenario=st.one_of(st.none(), st.none(), SETTLEMENT_ERROR, st.just("INSUFFICIENT_FUNDS")),
        devolucao=st.booleans(),
        in_house=st.booleans(),
    )
    def refund(
        self,
        pick: int,
        spec: tuple[str, int],
        near_balance: bool,
        scenario: str | None,
        devolucao: bool,
        in_house: bool,
    ) -> None:
        """A received PIX returned to its payer (either family): never more than is left of
        it, never after the window, never more than the available balance."""
        pix = self.pick_received(pick, in_house)
        account = self.accounts[pix.who]
        amount = amount_from(spec, account.available if near_balance else pix.left)
        external_id = uuid.uuid4().hex
        rt = self.rt

        async def call() -> refunds.Refund:
            # the amount as the routes read it: 0 is refused before the service is called
            checked = refunds.RefundOrder(
                amount=refunds.amount_of(cents(amount), "valor"), external_id=external_id
            )
            if devolucao:
                made = await refunds.devolucao(
                    rt, account.id, pix.end_to_end_id, checked, instructions=Instructions(scenario)
                )
                assert not made.replayed
                return made.refund
            return await refunds.refund_in(
                rt, account.id, pix.transaction_id, checked, instructions=Instructions(scenario)
            )

        short = DevolucaoInsufficientBalance if devolucao else InsufficientBalance
        late = DevolucaoDeadlineExceeded if devolucao else RefundDeadlineExceeded
        refusal: type[PixgateError] | None = None
        if amount < 1:
            refusal = ValidationFailed
        elif (self.today - pix.on).days > rt.settings.refund_window_days:
            refusal = late
        elif amount > pix.left:
            refusal = RefundAmountExceeded
        elif amount > account.available or scenario == "INSUFFICIENT_FUNDS":
            refusal = short
        if refusal is not None:
            self.refused(refusal, call())
            return
        made = self.run(call())
        assert made.status == TransactionStatus.PENDING and made.amount == amount
        account.external_ids.append(external_id)
        pix.refunded += amount
        # a PIX another of our accounts paid is returned in the house, at the next drain:
        # no bank is asked, so a settlement-error scenario does not apply
        fails = scenario in SETTLEMENT_ERRORS and pix.paid_by is None
        self.hold(Pending(pix.who, amount, 0, fails=fails, counted=None, refund_of=pix))

    @precondition(lambda self: self.sent)
    @rule(pick=PICK, spec=AMOUNT)
    def refund_received(self, pick: int, spec: tuple[str, int]) -> None:
        """The receiver of a payment returns (part of) it: credited at once, never more in
        all than the payment; a payment not (yet) CONFIRMED cannot be returned, nor one to
        another of our accounts (which returns it with a refund)."""
        settled = [s for s in self.sent if s.status == TransactionStatus.CONFIRMED]
        sent = pick_from(settled if settled and pick % 4 else self.sent, pick)
        account = self.accounts[sent.who]
        amount = amount_from(spec, sent.amount - sent.returned)
        returning = refunds.refund_out(self.rt, account.id, sent.transaction_id, cents(amount))
        if amount < 1:
            self.refused(ValidationFailed, returning)
        elif sent.status != TransactionStatus.CONFIRMED or sent.in_house:
            self.refused(NotFound, returning)
        elif sent.returned + amount > sent.amount:
            self.refused(RefundAmountExceeded, returning)
        else:
            made = self.run(returning)
            assert made.status == TransactionStatus.CONFIRMED
            sent.returned += amount
            account.available += amount

    # --- MED ------------------------------------------------------------------------------

    @rule(pick=PICK, unknown=st.integers(0, 4), in_house=st.booleans())
    def med_open(self, pick: int, unknown: int, in_house: bool) -> None:
        """The payer's bank disputes a PIX: what is left of it, up to the available balance,
        is blocked; one case at a time per PIX. A PIX we do not know blocks nothing."""
        if unknown == 0 or not self.received:
            who = pick % len(self.accounts)
            end_to_end_id = new_end_to_end_id("60701190", self.clock.now())
            case = self.run(med.request(self.rt, self.accounts[who].id, _request(end_to_end_id)))
            assert (case.status, case.blocked_amount) == (MedStatus.OPEN, 0)
            self.cases.append(Case(case.id, who, end_to_end_id, None, 0))
            return
        pix = self.pick_received(pick, in_house)
        account = self.accounts[pix.who]
        opening = med.request(self.rt, account.id, _request(pix.end_to_end_id))
        if pix.case is not None:
            self.refused(Conflict, opening)
            return
        case = self.run(opening)
        blocked = max(min(pix.left, account.available), 0)
        assert (case.status, case.blocked_amount) == (MedStatus.RECEIVED, blocked)
        account.available -= blocked
        account.blocked += blocked
        pix.case = Case(case.id, pix.who, pix.end_to_end_id, pix, blocked)
        self.cases.append(pix.case)

    @precondition(lambda self: self.cases)
    @rule(pick=PICK, approved=st.booleans())
    def med_analyse(self, pick: int, approved: bool) -> None:
        """The case ends: its block released and, approved, returned to the payer by a refund
        of what is left of the PIX (at most the block). An ended case is final."""
        under_analysis = [c for c in self.cases if c.open]
        case = pick_from(under_analysis if under_analysis and pick % 4 else self.cases, pick)
        result = AnalysisResult.APPROVED if approved else AnalysisResult.REJECTED
        analysing = med.analyse(self.rt, self.accounts[case.who].id, case.id, result, None)
        if not case.open:
            self.refused(Conflict, analysing)
            return
        ended = self.run(analysing)
        assert ended.status == MedStatus.ANALYZED
        self._release(case)
        pix = case.original
        refund = min(case.blocked, pix.left) if approved and pix is not None else 0
        assert (ended.refund_transaction_id is not None) == (refund > 0)
        if pix is not None and refund > 0:
            pix.refunded += refund
            self.hold(Pending(case.who, refund, 0, fails=False, counted=None, refund_of=pix))

    @precondition(lambda self: self.cases)
    @rule(pick=PICK)
    def med_cancel(self, pick: int) -> None:
        """The payer's bank withdraws its request: the block is released; with no case under
        analysis for the PIX, there is nothing to cancel."""
        under_analysis = [c for c in self.cases if c.open]
        case = pick_from(under_analysis if under_analysis and pick % 4 else self.cases, pick)
        cancelling = med.request(
            self.rt,
            self.accounts[case.who].id,
            _request(case.end_to_end_id, MedReason.REFUND_CANCELLATION),
        )
        still_open = case.open or (case.original is not None and case.original.case is not None)
        if not still_open:
            self.refused(NotFound, cancelling)
            return
        if not case.open:  # a later case of the same PIX is the one under analysis
            assert case.original is not None and case.original.case is not None
            case = case.original.case
        assert self.run(cancelling).status == MedStatus.CANCELLED
        self._release(case)

    def _release(self, case: Case) -> None:
        account = self.accounts[case.who]
        account.available += case.blocked
        account.blocked -= case.blocked
        case.open = False
        if case.original is not None:
            case.original.case = None
