"""The ledger model's rules that move money in and out: PIX received, cash-ins and cobs
paid by the sandbox, cash-outs, QR payments and DICT transfers."""

from __future__ import annotations

import uuid
from collections.abc import Coroutine
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import (
    precondition,
    rule,
)

from pixgate.charges.service import cash_in, charges, cob
from pixgate.core.errors import (
    ChargeNotPayable,
    DictKeyNotFound,
    DuplicateExternalId,
    IdempotencyKeyReused,
    InsufficientBalance,
    InvalidAmount,
    InvalidQrCode,
    OwnChargePayment,
    PixgateError,
    QrCodeAmountMismatch,
    ValidationFailed,
)
from pixgate.core.ids import new_txid
from pixgate.core.labels import TransactionStatus
from pixgate.core.pix import brcode
from pixgate.core.pix.keys import KeyType
from pixgate.ledger.queries.transactions import Transaction
from pixgate.ledger.service import transactions
from pixgate.payouts.service import cash_out, cash_out_qrcode, dict_transfer
from pixgate.payouts.service.outgoing import CashOut
from pixgate.provider.base import Instructions
from pixgate.sandbox.rules import SETTLEMENT_ERRORS
from tests.helpers import footprint
from tests.ledger.model_base import LedgerModel
from tests.ledger.model_world import (
    AMOUNT,
    CASH_IN_EXPIRATION,
    CASH_OUT_KEY,
    CENTS,
    COB_EXPIRATION,
    CPF,
    DICT_KEY,
    HOLDER_CPF,
    MOSTLY_CENTS,
    OUTSIDE_KEY,
    PAYER,
    PICK,
    SCENARIOS,
    SETTLEMENT_ERROR,
    SYNCHRONOUS,
    UNREGISTERED_KEY,
    WHO,
    Charge,
    Pending,
    Received,
    Sent,
    _split,
    amount_from,
    cents,
)


class MoneyRules(LedgerModel):
    # --- money in -------------------------------------------------------------------------

    @rule(
        who=WHO,
        amount=MOSTLY_CENTS,
        days_ago=st.sampled_from([0, 0, 0, 89, 90]),
    )
    def receive(self, who: int, amount: int, days_ago: int) -> None:
        """A PIX from outside, without a charge; paid `days_ago` (for the refund window)."""
        account = self.accounts[who]
        paid_at = self.clock.now() - timedelta(days=days_ago)
        incoming = charges.sandbox_incoming(
            self.rt, account.id, cents(amount), PAYER, paid_at=paid_at
        )
        if amount == 0:
            self.refused(ValidationFailed, incoming)
            return
        got = self.run(incoming)
        account.available += amount - min(self.fee(who, "cash_in", amount), amount)
        on = paid_at.astimezone(self.zone).date()
        self.received.append(Received(who, got.transaction_id, got.end_to_end_id, amount, on))

    @rule(
        owner=WHO,
        amount=MOSTLY_CENTS,
        fixed=st.one_of(st.none(), st.none(), st.integers(1, 50_00)),
        percent=st.one_of(st.none(), st.none(), st.sampled_from(["10", "33.33", "50", "100"])),
    )
    def create_cash_in(
        self, owner: int, amount: int, fixed: int | None, percent: str | None
    ) -> None:
        """A charge with up to two immediate splits; refused when they take more than it
        brings in (net of the cash-in fee)."""
        splits = []
        if fixed is not None:
            splits.append(_split("FIXED", cents(fixed)))
        if percent is not None:
            splits.append(_split("PERCENTAGE", Decimal(percent)))
        external_id = uuid.uuid4().hex
        order = cash_in.CashInOrder(
            value=cents(amount),
            description="pedido",
            external_id=external_id,
            payer_name=PAYER.name,
            payer_document=CPF,
            expiration_time=CASH_IN_EXPIRATION,
            splits=splits,
        )
        created = cash_in.create(self.rt, self.accounts[owner].id, order)
        taken = Fraction(fixed or 0) + Fraction(amount) * Fraction(percent or 0) / 100
        fee = self.fee(owner, "cash_in", amount)
        if amount == 0 or taken > amount or (splits and fee and taken > amount - fee):
            self.refused(ValidationFailed, created)
            return
        charge = self.run(created)
        shares = [] if fixed is None else [fixed]
        if percent is not None:
            shares.append(round(Fraction(amount) * Fraction(percent) / 100))
        self.accounts[owner].external_ids.append(external_id)
        self.charges.append(
            Charge(owner, amount, charge.pix_code, charge.expires_at, shares, external_id, None)
        )

    @rule(owner=WHO, amount=CENTS)
    def create_cob(self, owner: int, amount: int) -> None:
        txid = new_txid(32)
        made = self.run(
            cob.create(
                self.rt,
                self.accounts[owner].id,
                txid,
                cob.CobInput(expiracao=COB_EXPIRATION, original=str(cents(amount))),
            )
        )
        charge = made.charge
        self.charges.append(
            Charge(owner, amount, charge.pix_code, charge.expires_at, [], None, txid)
        )

    def payable(self, charge: Charge) -> bool:
        return not charge.paid and self.clock.now() < charge.expires_at

    @precondition(lambda self: self.charges)
    @rule(pick=PICK)
    def sandbox_pay(self, pick: int) -> None:
        """The outside payer pays a charge: once, before it expires."""
        charge = self.charges[pick % len(self.charges)]
        paying = charges.sandbox_pay(self.rt, charge.pix_code, PAYER)
        if not self.payable(charge):
            self.refused(ChargeNotPayable, paying)
            return
        got = self.run(paying)
        self.credit(charge)
        self.received.append(
            Received(charge.owner, got.transaction_id, got.end_to_end_id, charge.amount, self.today)
        )

    # --- money out ------------------------------------------------------------------------

    def payout_refusal(
        self, who: int, amount: int, scenario: str | None
    ) -> type[PixgateError] | None:
        """What refuses a cash-out (a QR one to another bank too), in the services' order."""
        if amount < 1:
            return InvalidAmount
        if scenario in SYNCHRONOUS:
            return SYNCHRONOUS[scenario]
        limit = self.limit_refusal(who, amount)
        if limit is not None:
            return limit
        if amount + self.fee(who, "cash_out", amount) > self.accounts[who].available:
            return InsufficientBalance
        return None

    def payout_amount(self, who: int, spec: tuple[str, int], near_limit: bool) -> int:
        edge = self.limit_edge(who) if near_limit else self.affordable(who, "cash_out")
        return amount_from(spec, edge)

    @rule(
        who=WHO,
        spec=AMOUNT,
        near_limit=st.booleans(),
        scenario=SCENARIOS,
        reuse=st.integers(0, 4),
    )
    def send_cash_out(
        self,
        who: int,
        spec: tuple[str, int],
        near_limit: bool,
        scenario: str | None,
        reuse: int,
    ) -> None:
        """A PIX to a key: held now, settled (or voided, by the scenario) at the next drain;
        a reused externalId is refused before the limits and the balance."""
        account = self.accounts[who]
        amount = self.payout_amount(who, spec, near_limit)
        duplicate = reuse == 0 and bool(account.external_ids)
        external_id = account.external_ids[-1] if duplicate else uuid.uuid4().hex
        order = cash_out.CashOutOrder(
            value=cents(amount),
            external_id=external_id,
            key=CASH_OUT_KEY,
            key_type=KeyType.RANDOM,
            name="Fulano",
            document=CPF,
        )
        sending = cash_out.create(self.rt, account.id, order, instructions=Instructions(scenario))
        refusal = self.payout_refusal(who, amount, scenario)
        if duplicate and amount >= 1 and scenario not in SYNCHRONOUS:
            refusal = DuplicateExternalId
        if refusal is not None:
            self.refused(refusal, sending)
            return
        made = self.run(sending)
        assert made.status == TransactionStatus.PENDING
        account.external_ids.append(external_id)
        sent = Sent(who, made.transaction_id, amount, TransactionStatus.PENDING)
        self.sent.append(sent)
        fee = self.fee(who, "cash_out", amount)
        fails = scenario in SETTLEMENT_ERRORS
        self.hold(Pending(who, amount, fee, fails=fails, counted=self.today, sent=sent))

    @rule(
        who=WHO,
        pick=PICK,
        code_of=st.sampled_from(["charge", "charge", "outside", "garbage"]),
        off_by=st.sampled_from([0, 0, 0, 0, 1, -1_000_000]),
        scenario=SCENARIOS,
    )
    def pay_qr_code(
        self, who: int, pick: int, code_of: str, off_by: int, scenario: str | None
    ) -> None:
        """A BR Code paid by an account: another account's charge settles at once, between
        the two accounts; another bank's static code is paid out like a cash-out."""
        payer = self.accounts[who]
        charge = self.charges[pick % len(self.charges)] if self.charges else None
        if code_of == "charge" and charge is None:
            code_of = "outside"
        if code_of == "charge":
            assert charge is not None
            code, amount = charge.pix_code, max(charge.amount + off_by, 0)
            scenario = scenario if scenario in SYNCHRONOUS else None
        else:
            code = brcode.encode(brcode.static(OUTSIDE_KEY, "Loja Externa", "SAO PAULO"))
            if code_of == "garbage":
                code = code[:-4] + "0000"  # a wrong CRC
            amount = self.affordable(who, "cash_out") + min(off_by, 1)
        order = cash_out_qrcode.QrCashOutOrder(
            value=cents(max(amount, 0)), qr_code=code, external_id=uuid.uuid4().hex
        )
        paying = cash_out_qrcode.create(
            self.rt, payer.id, order, instructions=Instructions(scenario)
        )
        if code_of == "charge":
            assert charge is not None
            self._pay_charge(who, charge, amount, scenario, paying)
            return
        refusal: type[PixgateError] | None = InvalidAmount if amount < 1 else None
        if refusal is None and code_of == "garbage":
            refusal = InvalidQrCode
        refusal = refusal or self.payout_refusal(who, amount, scenario)
        if refusal is not None:
            self.refused(refusal, paying)
            return
        made = self.run(paying)
        payer.external_ids.append(order.external_id)
        sent = Sent(who, made.transaction_id, amount, TransactionStatus.PENDING)
        self.sent.append(sent)
        fee = self.fee(who, "cash_out", amount)
        fails = scenario in SETTLEMENT_ERRORS
        self.hold(Pending(who, amount, fee, fails=fails, counted=self.today, sent=sent))

    def _pay_charge(
        self,
        who: int,
        charge: Charge,
        amount: int,
        scenario: str | None,
        paying: Coroutine[Any, Any, CashOut],
    ) -> None:
        payer = self.accounts[who]
        fee = self.fee(who, "cash_out", amount)
        refusal: type[PixgateError] | None
        if amount < 1:
            refusal = InvalidAmount
        elif amount != charge.amount:
            refusal = QrCodeAmountMismatch
        elif who == charge.owner:
            refusal = OwnChargePayment
        elif not self.payable(charge):  # the charge is checked before the payer's terms
            refusal = InvalidQrCode
        else:
            refusal = self.limit_refusal(who, amount)
            if refusal is None and amount + fee > payer.available:
                refusal = InsufficientBalance
            if refusal is None and scenario in SYNCHRONOUS:  # once all else would pass
                refusal = SYNCHRONOUS[scenario]
        if refusal is not None:
            self.refused(refusal, paying)
            return
        made = self.run(paying)
        assert made.status == TransactionStatus.CONFIRMED
        payer.available -= amount + fee
        payer.used[self.today] = payer.used.get(self.today, 0) + amount
        sent = Sent(who, made.transaction_id, amount, TransactionStatus.CONFIRMED, in_house=True)
        self.sent.append(sent)
        self.credit(charge)
        payment = self.run(self._payment_of(charge))
        assert payment.amount == amount and payment.end_to_end_id is not None
        self.received.append(
            Received(
                charge.owner,
                payment.transaction_id,
                payment.end_to_end_id,
                amount,
                self.today,
                paid_by=sent,
            )
        )

    async def _payment_of(self, charge: Charge) -> Transaction:
        """The PAYMENT transaction of a charge paid by another account, as its owner reads it."""
        owner = self.accounts[charge.owner].id
        if charge.txid is not None:
            payment = (await cob.get(self.rt, owner, charge.txid)).payment
            assert payment is not None
            return payment
        page = await transactions.statement(
            self.rt, owner, transactions.ListQuery(external_id=charge.external_id)
        )
        [payment] = page.rows
        return payment

    @rule(
        who=WHO,
        spec=AMOUNT.filter(lambda spec: spec[0] != "zero"),
        key=st.sampled_from([DICT_KEY, DICT_KEY, DICT_KEY, UNREGISTERED_KEY]),
        priority=st.sampled_from(["NORM", "HIGH"]),
        document=st.sampled_from([None, None, HOLDER_CPF, CPF]),
        scenario=st.one_of(st.none(), SETTLEMENT_ERROR),
    )
    def send_dict_transfer(
        self,
        who: int,
        spec: tuple[str, int],
        key: str,
        priority: str,
        document: str | None,
        scenario: str | None,
    ) -> None:
        """A PIX to a DICT key: counted by the limits but not refused by them; a creditor
        document that differs from the holder's ends in ERROR at once, holding nothing; a NORM
        transfer still queued after its expiration (600 s) ends in ERROR."""
        account = self.accounts[who]
        amount = max(amount_from(spec, self.affordable(who, "dict_transfer")), 1)
        order = dict_transfer.TransferOrder(
            pix_key=key, amount=amount, priority=priority, creditor_document=document
        )
        idempotency_key = uuid.uuid4()
        sending = dict_transfer.create(
            self.rt,
            account.id,
            order,
            idempotency_key=idempotency_key,
            instructions=Instructions(scenario),
        )
        fee = self.fee(who, "dict_transfer", amount)
        if key == UNREGISTERED_KEY:
            self.refused(DictKeyNotFound, sending)
            return
        if document == CPF:  # not the holder's
            made = self.run(sending)
            assert made.status == TransactionStatus.ERROR
            account.transfers[idempotency_key] = order
            return
        if amount + fee > account.available:
            # the service raises the domain error; the DICT route answers it 422
            self.refused(InsufficientBalance, sending)
            return
        made = self.run(sending)
        assert made.status == TransactionStatus.PENDING and not made.replayed
        account.transfers[idempotency_key] = order
        expires_at = self.clock.now() + timedelta(seconds=600) if priority == "NORM" else None
        self.hold(
            Pending(
                who,
                amount,
                fee,
                fails=scenario is not None,
                counted=self.today,
                expires_at=expires_at,
            )
        )

    @precondition(lambda self: any(a.transfers for a in self.accounts))
    @rule(pick=PICK, same=st.booleans())
    def repeat_dict_transfer(self, pick: int, same: bool) -> None:
        """A repeated idempotency key answers the first transfer and moves nothing; with
        another body it is refused."""
        stored = [(a, k, o) for a in self.accounts for k, o in a.transfers.items()]
        account, key, order = stored[pick % len(stored)]
        if not same:
            order = dict_transfer.TransferOrder(
                pix_key=order.pix_key,
                amount=order.amount + 1,
                priority=order.priority,
                creditor_document=order.creditor_document,
            )
        repeat = dict_transfer.create(self.rt, account.id, order, idempotency_key=key)
        if not same:
            self.refused(IdempotencyKeyReused, repeat)
            return
        before = self.run(footprint(self.rt))
        assert self.run(repeat).replayed
        assert self.run(footprint(self.rt)) == before
