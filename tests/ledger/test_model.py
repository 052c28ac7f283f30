"""Every use case that moves money, driven through its service in random orders, against a model.

The unit tests prove each use case alone; test_moves.py and test_refund_moves.py drive the
database functions. This machine drives the services themselves (cash-outs, QR payments of
other accounts' charges and of outside codes, cash-ins with splits paid by the sandbox payer,
cobs, DICT transfers, refunds of both families (returned in the house, to the payer's
account, when another of our accounts paid the PIX), refunds received, MED cases, limits,
the clock, and the settlement jobs) across three accounts, one of which pays fees, in orders
no one wrote by hand. Holds stay PENDING until the `run_settlements` rule drains the due jobs, so
settlements interleave with everything else.

The model, in integer cents, knows for each call whether it must succeed or raise which
domain error: amounts of 0, above the balance, above what is left to refund, above the
per-transaction or daily limit, refunds after the window, charges paid twice or expired.
A refusal must write nothing. After every step the database must agree with the model:
each account's available and blocked balances (read through `services.balances`), blocked
equal to the PENDING holds and MED blocks that make it up, what is left to refund of each
PIX, the limits' counted volume per day, nothing negative, and `ledger.verify.problems()`
empty (every balance equals its journal, every entry balances).

Services are async and Hypothesis's state machines are not: the machine runs each call on an
event loop of its own, with a Runtime of its own (a small pool) on the session's database,
emptied at the start of every example. The clock is a FixedClock at noon in Brasília, in the
past, so every job is due when drained and the night limit never applies; it moves by
whole days.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from pixgate.db.jobs import SETTLE_PAYOUT
from pixgate.db.transactions import Transaction
from pixgate.domain import brcode
from pixgate.domain.documents import make_cpf
from pixgate.domain.errors import (
    ChargeNotPayable,
    Conflict,
    DailyLimitExceeded,
    DevolucaoDeadlineExceeded,
    DevolucaoInsufficientBalance,
    DictKeyNotFound,
    DictTransferInsufficientBalance,
    DuplicateExternalId,
    IdempotencyKeyReused,
    InsufficientBalance,
    InvalidAmount,
    InvalidPixKey,
    InvalidQrCode,
    NotFound,
    OwnChargePayment,
    PixgateError,
    ProviderUnavailable,
    QrCodeAmountMismatch,
    RefundAmountExceeded,
    RefundDeadlineExceeded,
    TransactionLimitExceeded,
    ValidationFailed,
)
from pixgate.domain.ids import new_end_to_end_id, new_txid
from pixgate.domain.labels import TransactionStatus
from pixgate.domain.med import AnalysisResult, MedReason, MedStatus
from pixgate.domain.pix_keys import KeyType, SplitKeyType
from pixgate.domain.scenarios import SETTLEMENT_ERRORS
from pixgate.ledger import verify
from pixgate.runtime import Runtime, build_runtime
from pixgate.services import (
    accounts,
    balances,
    cash_in,
    cash_out,
    cash_out_qrcode,
    charges,
    cob,
    dict_transfer,
    med,
    refunds,
    sandbox,
    transactions,
)
from pixgate.services.outgoing import CashOut
from pixgate.settings import Settings
from tests.helpers import empty_database, footprint
from tests.support import FixedClock, drain

T = TypeVar("T")

START = datetime(2023, 6, 1, 15, 0, tzinfo=UTC)
"""12:00 in Brasília (no night limit), long past (every job is due when drained)."""
MAX_DAYS = 200
"""How far the clock may move: it stays in the past."""
CPF = "52998224725"
HOLDER_CPF = make_cpf("123456789")
PAYER = charges.Payer(name="Pagador Externo", document=CPF)
CASH_OUT_KEY = "123e4567-e12b-42d3-a456-426614174000"
"""Nobody's key in the sandbox DICT: the settling bank pays a synthetic holder."""
DICT_KEY = "0f8e2b5a-3c4d-4e5f-8a9b-1c2d3e4f5a6b"
"""Registered in the sandbox DICT (HOLDER_CPF) at the start of every example."""
UNREGISTERED_KEY = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
OUTSIDE_KEY = "aa8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
"""The key of the static BR Codes of another bank."""
FEE_ACCOUNT = 2
FEES = {
    "cash_out": {"fixed": "1.00", "percent": "1"},
    "cash_in": {"fixed": "0.30"},
    "dict_transfer": {"fixed": "0.50"},
}
"""The third account's fees; the other two pay none (the settings' default is zero)."""
LIMITED_ACCOUNT = 0
DEFAULT_LIMITS = (10_000_000, 50_000_000)
"""The settings' default per-transaction and daily limits, in cents."""
CASH_IN_EXPIRATION = 2 * 86400
COB_EXPIRATION = 3600
SETTLEMENT_ERROR = st.sampled_from(["ORDER_REJECTED", "SETTLEMENT_TIMEOUT"])
SYNCHRONOUS: dict[str, type[PixgateError]] = {
    "INSUFFICIENT_FUNDS": InsufficientBalance,
    "PROVIDER_UNAVAILABLE": ProviderUnavailable,
    "INVALID_PIX_KEY": InvalidPixKey,
}
SCENARIOS = st.one_of(
    st.none(), st.none(), st.none(), SETTLEMENT_ERROR, st.sampled_from(sorted(SYNCHRONOUS))
)
WHO = st.integers(0, 2)
PICK = st.integers(0, 1000)
CENTS = st.integers(1, 200_00)
MOSTLY_CENTS = st.tuples(st.sampled_from([1, 1, 1, 1, 1, 0]), CENTS).map(lambda t: t[0] * t[1])
"""An amount, 0 one time in six."""
AMOUNT = st.tuples(
    st.sampled_from(["cents", "cents", "part", "part", "edge", "zero"]),
    CENTS,
    st.integers(1, 4),
    st.integers(-1, 1),
).map(lambda t: (t[0], {"cents": t[1], "part": t[2], "edge": t[3], "zero": 0}[t[0]]))
"""An amount: ("cents", n); ("zero", 0); ("part", k): k quarters of the boundary the rule
cares about (all of the balance, what is left to refund, the limit); or ("edge", d): d cents
off it, so both sides of it are tried."""
LIMITS = st.one_of(st.none(), st.sampled_from([50_00, 150_00, 400_00]))


def cents(amount: int) -> Decimal:
    return Decimal(amount).scaleb(-2)


def pick_from(items: list[T], pick: int) -> T:
    return items[pick % len(items)]


def amount_from(spec: tuple[str, int], edge: int) -> int:
    kind, value = spec
    if kind == "part":
        return max(edge, 0) * value // 4
    if kind == "edge":
        return max(edge + value, 0)
    return value


@dataclass
class Account:
    id: int
    available: int
    blocked: int = 0
    transaction_limit: int | None = None
    daily_limit: int | None = None
    used: dict[date, int] = field(default_factory=dict)
    """The limits' counted volume per local day (the payouts not in ERROR)."""
    external_ids: list[str] = field(default_factory=list)
    transfers: dict[uuid.UUID, dict_transfer.TransferOrder] = field(default_factory=dict)
    """The DICT transfers stored, by idempotency key."""


@dataclass
class Received:
    """A PIX the account received: refundable, disputable."""

    who: int
    transaction_id: uuid.UUID
    end_to_end_id: str
    amount: int
    on: date
    refunded: int = 0
    """PENDING and CONFIRMED refunds."""
    case: Case | None = None
    """Its MED case under analysis."""
    paid_by: Sent | None = None
    """The payment of another of our accounts that paid it (a QR payment of a charge): its
    refunds are returned in the house, to that account."""

    @property
    def left(self) -> int:
        return self.amount - self.refunded


@dataclass
class Sent:
    """A payment the account sent that its receiver may return (refund_out) once CONFIRMED."""

    who: int
    transaction_id: uuid.UUID
    amount: int
    status: TransactionStatus
    returned: int = 0
    in_house: bool = False
    """It paid another of our accounts' charge: no return of it comes from another bank, only
    that account's refunds, credited when they settle."""


@dataclass
class Case:
    id: int
    who: int
    end_to_end_id: str
    original: Received | None
    blocked: int
    open: bool = True


@dataclass
class Charge:
    """A cash-in charge or a cob, and the shares of its immediate splits."""

    owner: int
    amount: int
    pix_code: str
    expires_at: datetime
    shares: list[int]
    external_id: str | None
    txid: str | None
    paid: bool = False


@dataclass
class Pending:
    """Money held until the next drain settles it: a payout, a refund, a split's share."""

    who: int
    amount: int
    fee: int
    fails: bool
    counted: date | None
    """The day whose limit usage counts it (payouts; refunds are not counted)."""
    expires_at: datetime | None = None
    """A NORM DICT transfer still queued at this time ends in ERROR."""
    sent: Sent | None = None
    refund_of: Received | None = None


@dataclass
class Env:
    loop: asyncio.AbstractEventLoop
    rt: Runtime

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)


HELD = """
SELECT a.id, a.available, a.blocked,
       coalesce((SELECT sum(t.amount + t.fee) FROM transactions t
                 WHERE t.account_id = a.id AND t.status = 'PENDING'
                   AND t.operation IN ('WITHDRAW', 'REFUND_IN')), 0)
       + coalesce((SELECT sum(m.blocked_amount) FROM med_cases m
                   WHERE m.account_id = a.id AND m.status = 'RECEIVED'), 0) AS held
FROM accounts a ORDER BY a.id
"""
"""Each account's balances and the holds that make up its blocked balance."""
USED = """
SELECT account_id, (bucket AT TIME ZONE $1)::date AS day, sum(used)::bigint AS used
FROM limit_usage GROUP BY 1, 2 HAVING sum(used) <> 0
"""
LEFT = """
SELECT transaction_id, refund_left(id) AS left FROM transactions
WHERE transaction_id = ANY($1::uuid[])
"""


class Ledger(RuleBasedStateMachine):
    def __init__(self, env: Env) -> None:
        super().__init__()
        self.env = env
        self.rt = env.rt
        self.clock = FixedClock(START)
        self.zone = ZoneInfo(self.rt.settings.timezone)
        self.accounts: list[Account] = []
        self.received: list[Received] = []
        self.sent: list[Sent] = []
        self.charges: list[Charge] = []
        self.cases: list[Case] = []
        self.pending: list[Pending] = []

    # --- the model's arithmetic -----------------------------------------------------------

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.env.run(coro)

    @property
    def today(self) -> date:
        return self.clock.now().astimezone(self.zone).date()

    def fee(self, who: int, operation: str, amount: int) -> int:
        """The account's fee, as FEES prices it: cash_out 1.00 + 1% (half up)."""
        if who != FEE_ACCOUNT:
            return 0
        if operation == "cash_out":
            return 100 + (amount + 50) // 100
        return {"cash_in": 30, "dict_transfer": 50}[operation]

    def affordable(self, who: int, operation: str) -> int:
        """The largest amount whose amount + fee the available balance covers."""
        available = self.accounts[who].available
        amount = max(available * 100 // 101 - 100, 0)
        while amount + 1 + self.fee(who, operation, amount + 1) <= available:
            amount += 1
        while amount > 0 and amount + self.fee(who, operation, amount) > available:
            amount -= 1
        return amount

    def limits(self, who: int) -> tuple[int, int]:
        account = self.accounts[who]
        transaction, daily = DEFAULT_LIMITS
        return (
            transaction if account.transaction_limit is None else account.transaction_limit,
            daily if account.daily_limit is None else account.daily_limit,
        )

    def limit_refusal(self, who: int, amount: int) -> type[PixgateError] | None:
        transaction, daily = self.limits(who)
        if amount > transaction:
            return TransactionLimitExceeded
        if self.accounts[who].used.get(self.today, 0) + amount > daily:
            return DailyLimitExceeded
        return None

    def limit_edge(self, who: int) -> int:
        transaction, daily = self.limits(who)
        return min(transaction, daily - self.accounts[who].used.get(self.today, 0))

    def pick_received(self, pick: int, in_house: bool) -> Received:
        """A PIX received; `in_house`: one another of our accounts paid, when there is one."""
        paid_by_us = [p for p in self.received if p.paid_by is not None]
        return pick_from(paid_by_us if in_house and paid_by_us else self.received, pick)

    def hold(self, pending: Pending) -> None:
        account = self.accounts[pending.who]
        account.available -= pending.amount + pending.fee
        account.blocked += pending.amount + pending.fee
        if pending.counted is not None:
            account.used[pending.counted] = account.used.get(pending.counted, 0) + pending.amount
        self.pending.append(pending)

    def settle(self, pending: Pending) -> None:
        account = self.accounts[pending.who]
        account.blocked -= pending.amount + pending.fee
        expired = pending.expires_at is not None and self.clock.now() > pending.expires_at
        if pending.fails or expired:
            account.available += pending.amount + pending.fee
            if pending.counted is not None:
                account.used[pending.counted] -= pending.amount
            if pending.refund_of is not None:
                pending.refund_of.refunded -= pending.amount
        elif pending.refund_of is not None and pending.refund_of.paid_by is not None:
            # returned in the house: the payer's account credited with a refund received
            paid_by = pending.refund_of.paid_by
            paid_by.returned += pending.amount
            self.accounts[paid_by.who].available += pending.amount
        if pending.sent is not None:
            failed = pending.fails or expired
            pending.sent.status = TransactionStatus.ERROR if failed else TransactionStatus.CONFIRMED

    def credit(self, charge: Charge) -> None:
        """A charge paid: its owner credited amount - cash-in fee, its splits held."""
        owner = self.accounts[charge.owner]
        owner.available += charge.amount - min(
            self.fee(charge.owner, "cash_in", charge.amount), charge.amount
        )
        for share in charge.shares:
            if 0 < share <= owner.available:  # else an ERROR payout that moved nothing
                self.hold(Pending(charge.owner, share, 0, fails=False, counted=self.today))
        charge.paid = True

    def refused(self, expected: type[PixgateError], coro: Coroutine[Any, Any, Any]) -> None:
        """The call raises exactly `expected` and writes nothing."""
        before = self.run(footprint(self.rt))
        with pytest.raises(PixgateError) as caught:
            self.run(coro)
        assert type(caught.value) is expected, f"{caught.value!r}, expected {expected.__name__}"
        assert self.run(footprint(self.rt)) == before

    # --- setup ----------------------------------------------------------------------------

    @initialize(
        seeds=st.lists(st.sampled_from([300_00, 2_000_00, 50_00, 0]), min_size=3, max_size=3),
        received=st.lists(CENTS, min_size=3, max_size=3),
        in_house=st.one_of(st.none(), st.integers(1, 100_00)),
    )
    def start(self, seeds: list[int], received: list[int], in_house: int | None) -> None:
        """Three accounts, each with its seed balance and a PIX received (to refund, to
        dispute); `in_house`: and a PIX of that amount one of them paid to another (the
        richest pays a cob of the next), whose refunds are returned in the house."""
        self.run(self._start(seeds))
        for who, amount in enumerate(received):
            self.receive(who, amount, days_ago=0)
        if in_house is not None:
            payer = seeds.index(max(seeds))
            self.create_cob((payer + 1) % len(self.accounts), in_house)
            self.pay_qr_code(payer, len(self.charges) - 1, "charge", 0, None)

    async def _start(self, seeds: list[int]) -> None:
        rt = self.rt
        await empty_database(rt)
        rt.clock = self.clock
        for index, seed in enumerate(seeds):
            made = await accounts.create(rt, name=f"Conta {'ABC'[index]}", balance=cents(seed))
            self.accounts.append(Account(id=made.account_id, available=seed))
        await accounts.update(rt, self.accounts[FEE_ACCOUNT].id, {"fees": FEES})
        limited = self.accounts[LIMITED_ACCOUNT]
        limited.transaction_limit, limited.daily_limit = 150_00, 400_00
        await accounts.update(rt, limited.id, {"transaction_limit": 150_00, "daily_limit": 400_00})
        await sandbox.register_key(
            rt,
            self.accounts[1].id,
            key=DICT_KEY,
            key_type="EVP",
            name="Titular Dict",
            document=HOLDER_CPF,
            ispb="60701190",
            bank_name="Banco Sandbox",
            bank_code="341",
            branch="0001",
            account_number="12345-6",
            status="ACTIVE",
        )

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
        sending = cash_out.create(self.rt, account.id, order, scenario=scenario)
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
        paying = cash_out_qrcode.create(self.rt, payer.id, order, scenario=scenario)
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
        else:
            refusal = self.limit_refusal(who, amount)
            if refusal is None and not self.payable(charge):
                refusal = InvalidQrCode
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
            self.rt, account.id, order, idempotency_key=idempotency_key, scenario=scenario
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
            self.refused(DictTransferInsufficientBalance, sending)
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
                    rt, account.id, pix.end_to_end_id, checked, scenario=scenario
                )
                assert not made.replayed
                return made.refund
            return await refunds.refund_in(
                rt, account.id, pix.transaction_id, checked, scenario=scenario
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

    # --- terms, time, jobs ----------------------------------------------------------------

    @rule(who=st.sampled_from([LIMITED_ACCOUNT, 1]), transaction=LIMITS, daily=LIMITS)
    def set_limits(self, who: int, transaction: int | None, daily: int | None) -> None:
        """New limits apply to the next payment (the terms cached by the service are stale)."""
        account = self.accounts[who]
        changes = {"transaction_limit": transaction, "daily_limit": daily}
        updated = self.run(accounts.update(self.rt, account.id, changes))
        assert (updated.transaction_limit, updated.daily_limit) == (transaction, daily)
        account.transaction_limit, account.daily_limit = transaction, daily

    @precondition(lambda self: self.clock.now() < START + timedelta(days=MAX_DAYS - 90))
    @rule(days=st.sampled_from([1, 1, 45, 90]))
    def advance_clock(self, days: int) -> None:
        """A new day: new daily limits, charges and queued NORM transfers expire, refund
        windows close."""
        self.clock.advance(days=days)

    @rule()
    def run_settlements(self) -> None:
        """The settlement jobs run: every hold is posted, or voided by its scenario."""
        self.run(drain(self.rt, kinds=[SETTLE_PAYOUT.name]))
        for pending in self.pending:
            self.settle(pending)
        self.pending.clear()
        self.run(drain(self.rt))  # the rest (charges' expiry): no money moves

    # --- after every step, and at the end ------------------------------------------------

    def teardown(self) -> None:
        """Every example ends with its holds settled and the books checked once more, so each
        payout, refund and case it made is seen to its end. Skipped when a step failed
        (Hypothesis tears down in a `finally`): that failure is the one to report."""
        if sys.exc_info()[0] is not None or not self.accounts:
            return
        self.run_settlements()
        self.run(self._check())

    @invariant()
    def books_agree_with_the_model(self) -> None:
        self.run(self._check())

    async def _check(self) -> None:
        rt = self.rt
        for account in self.accounts:
            read = await balances.get(rt, account.id)
            assert (read.available, read.blocked) == (account.available, account.blocked)
            held = sum(p.amount + p.fee for p in self.pending if self.accounts[p.who] is account)
            held += sum(c.blocked for c in self.cases if c.open and self.accounts[c.who] is account)
            assert account.blocked == held
        async with rt.db.connection() as conn:
            assert await verify.problems(conn) == []
            rows = await conn.fetch(HELD)
            assert all(r["available"] >= 0 and r["blocked"] >= 0 for r in rows)
            assert [r["blocked"] for r in rows] == [r["held"] for r in rows]
            used = {
                (r["account_id"], r["day"]): r["used"]
                for r in await conn.fetch(USED, rt.settings.timezone)
            }
            left = {
                r["transaction_id"]: r["left"]
                for r in await conn.fetch(LEFT, [p.transaction_id for p in self.received])
            }
            returnable = {
                r["transaction_id"]: r["left"]
                for r in await conn.fetch(LEFT, [s.transaction_id for s in self.sent])
            }
        assert used == {
            (a.id, day): amount for a in self.accounts for day, amount in a.used.items() if amount
        }
        assert left == {p.transaction_id: p.left for p in self.received}
        for sent in self.sent:
            assert 0 <= sent.returned <= sent.amount
        assert returnable == {s.transaction_id: s.amount - s.returned for s in self.sent}


def _split(kind: str, value: Decimal) -> cash_in.SplitOrder:
    return cash_in.SplitOrder(
        pix_key="recebedor@example.com",
        pix_key_type=SplitKeyType.EMAIL,
        name="Recebedor",
        document=CPF,
        type="FIXED" if kind == "FIXED" else "PERCENTAGE",
        value=value,
        immediate=True,
    )


def _request(end_to_end_id: str, reason: MedReason = MedReason.REFUND_REQUEST) -> med.CaseRequest:
    cause = "SCAM" if reason is MedReason.REFUND_REQUEST else None
    return med.CaseRequest(
        end_to_end_id=end_to_end_id, reason=reason, cause=cause, description=None
    )


@contextlib.contextmanager
def own_runtime(base_settings: Settings, database_url: str) -> Iterator[Env]:
    """An event loop and a Runtime (a pool of at most 4) that live as long as the test."""
    loop = asyncio.new_event_loop()
    stack = contextlib.AsyncExitStack()
    small = base_settings.model_copy(update={"db_pool_min": 1, "db_pool_max": 4})
    try:
        rt = loop.run_until_complete(stack.enter_async_context(build_runtime(small, database_url)))
        yield Env(loop, rt)
    finally:
        loop.run_until_complete(stack.aclose())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def test_every_use_case_in_random_orders_keeps_the_books_equal_to_the_model(
    base_settings: Settings, database_url: str
) -> None:
    with own_runtime(base_settings, database_url) as env:

        class OnThisRuntime(Ledger):
            def __init__(self) -> None:
                super().__init__(env)

        run_state_machine_as_test(
            OnThisRuntime,
            settings=settings(
                max_examples=40,
                stateful_step_count=30,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            ),
        )
