"""The ledger model's state machine without its money rules: the model's state and
arithmetic, the setup, the terms, time and jobs rules, and the check after every step. The
rules that move money extend it (model_money.py, model_returns.py)."""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from pixgate.accounts.service import accounts, balances
from pixgate.core.errors import DailyLimitExceeded, PixgateError, TransactionLimitExceeded
from pixgate.core.labels import TransactionStatus
from pixgate.jobs.queue import SETTLE_PAYOUT
from pixgate.ledger.service import verify
from pixgate.sandbox import service as sandbox
from tests.helpers import empty_database, footprint
from tests.ledger.model_world import (
    CENTS,
    DEFAULT_LIMITS,
    DICT_KEY,
    FEE_ACCOUNT,
    FEES,
    HELD,
    HOLDER_CPF,
    LEFT,
    LIMITED_ACCOUNT,
    LIMITS,
    MAX_DAYS,
    START,
    USED,
    Account,
    Case,
    Charge,
    Env,
    Pending,
    Received,
    Sent,
    T,
    cents,
    pick_from,
)
from tests.support import FixedClock, drain


class LedgerModel(RuleBasedStateMachine):
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
