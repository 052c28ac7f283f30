"""payouts.service.cash_out and payouts.service.outgoing, called directly: a payout held with
its fee and counted by the limits, or refused with its domain error and nothing written."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from pixgate.accounts.service import accounts
from pixgate.core.errors import (
    DailyLimitExceeded,
    DuplicateExternalId,
    InsufficientBalance,
    NightLimitExceeded,
    PixgateError,
    TransactionLimitExceeded,
)
from pixgate.core.pix.keys import KeyType
from pixgate.jobs.queue import SETTLE_PAYOUT
from pixgate.ledger.service import verify
from pixgate.payouts.service import cash_out
from pixgate.provider.base import Instructions
from pixgate.runtime import Runtime
from tests.helpers import footprint, make_account
from tests.refunds.helpers import CPF, EVP, balance, stored
from tests.refunds.test_refunds_service import memos
from tests.support import FixedClock

SAO_PAULO = ZoneInfo("America/Sao_Paulo")
NOON = datetime(2026, 11, 20, 12, 0, tzinfo=SAO_PAULO)
NIGHT = datetime(2026, 11, 20, 21, 0, tzinfo=SAO_PAULO)
FEE = {"cash_out": {"fixed": "0.50", "percent": "1"}}
"""0.50 + 1%: 0.60 on 10.00."""
CENT_FEE = {"fees": {"cash_out": {"fixed": "0.01"}}}


def order(value: str = "10.00", external_id: str | None = None) -> cash_out.CashOutOrder:
    return cash_out.CashOutOrder(
        value=Decimal(value),
        external_id=external_id or f"svc-{uuid.uuid4().hex[:12]}",
        key=EVP,
        key_type=KeyType.RANDOM,
        name="Fulano",
        document=CPF,
    )


async def funded(rt: Runtime, balance: str = "100.00", **terms: Any) -> int:
    """A new account with `balance` and these fees or limits; its id."""
    account = await make_account(rt, balance=balance)
    if terms:
        await accounts.update(rt, account.account_id, terms)
    return account.account_id


async def settle_jobs(rt: Runtime) -> list[Any]:
    async with rt.db.connection() as conn:
        return [
            r["args"]["transaction_id"]
            for r in await conn.fetch("SELECT args FROM jobs WHERE kind = $1", SETTLE_PAYOUT.name)
        ]


class TestHold:
    async def test_holds_amount_plus_fee_counts_the_amount_and_queues_settlement(
        self, rt: Runtime
    ) -> None:
        account_id = await funded(rt, fees=FEE)
        made = await cash_out.create(rt, account_id, order("10.00", "svc-1"))
        assert (made.status, made.external_id) == ("PENDING", "svc-1")
        assert await balance(rt, account_id) == (10000 - 1060, 1060)
        row = await stored(rt, str(made.transaction_id))
        assert (row["operation"], row["status"], row["amount"], row["fee"]) == (
            "WITHDRAW",
            "PENDING",
            1000,
            60,
        )
        assert (row["pix_key"], row["pix_key_type"]) == (EVP, "RANDOM")
        assert await memos(rt, made.transaction_id) == [
            ("hold", "available", -1060),
            ("hold", "blocked", 1060),
        ]
        assert (await footprint(rt))["limit_usage"] == 1000  # the amount, not the fee
        assert await settle_jobs(rt) == [row["id"]]
        async with rt.db.connection() as conn:
            assert await verify.problems(conn) == []

    async def test_the_limits_count_every_accepted_payout(self, rt: Runtime) -> None:
        rt.clock = FixedClock(NOON)
        account_id = await funded(rt, daily_limit=1500)
        await cash_out.create(rt, account_id, order("10.00"))
        before = await footprint(rt)
        with pytest.raises(DailyLimitExceeded):
            await cash_out.create(rt, account_id, order("5.01"))
        assert await footprint(rt) == before
        await cash_out.create(rt, account_id, order("5.00"))
        assert (await footprint(rt))["limit_usage"] == 1500
        assert await balance(rt, account_id) == (8500, 1500)


class TestRefusals:
    @pytest.mark.parametrize(
        ("balance_", "terms", "clock", "value", "error"),
        [
            ("10.00", CENT_FEE, NOON, "10.00", InsufficientBalance),
            ("100.00", {"transaction_limit": 5000}, NOON, "50.01", TransactionLimitExceeded),
            ("100.00", {"daily_limit": 1000}, NOON, "10.01", DailyLimitExceeded),
            ("100.00", {"night_limit": 1000}, NIGHT, "10.01", NightLimitExceeded),
            ("10.00", {"daily_limit": 1000}, NOON, "20.00", DailyLimitExceeded),
        ],
        ids=["balance with fee", "per transaction", "daily", "night", "limit before balance"],
    )
    async def test_a_short_balance_or_limit_raises_its_error_and_writes_nothing(
        self,
        rt: Runtime,
        balance_: str,
        terms: dict[str, Any],
        clock: datetime,
        value: str,
        error: type[PixgateError],
    ) -> None:
        rt.clock = FixedClock(clock)
        account_id = await funded(rt, balance_, **terms)
        before, money = await footprint(rt), await balance(rt, account_id)
        with pytest.raises(error):
            await cash_out.create(rt, account_id, order(value))
        assert await footprint(rt) == before
        assert await balance(rt, account_id) == money

    @pytest.mark.parametrize(
        ("scenario", "code"),
        [
            ("INSUFFICIENT_FUNDS", "PIX_INSUFFICIENT_BALANCE"),
            ("INVALID_PIX_KEY", "PIX_INVALID_PIX_KEY"),
            ("PROVIDER_UNAVAILABLE", "PROVIDER_UNAVAILABLE"),
        ],
    )
    async def test_synchronous_scenarios_refuse_before_any_write(
        self, rt: Runtime, scenario: str, code: str
    ) -> None:
        account_id = await funded(rt)
        before = await footprint(rt)
        with pytest.raises(PixgateError) as refused:
            await cash_out.create(rt, account_id, order(), instructions=Instructions(scenario))
        assert refused.value.code == code
        assert await footprint(rt) == before

    @pytest.mark.parametrize("value", ["0.00", "0.001", "-1.00"])
    async def test_an_invalid_amount_is_refused(self, rt: Runtime, value: str) -> None:
        account_id = await funded(rt)
        before = await footprint(rt)
        with pytest.raises(PixgateError) as refused:
            await cash_out.create(rt, account_id, order(value))
        assert refused.value.code == "PIX_INVALID_AMOUNT"
        assert await footprint(rt) == before


async def test_a_duplicate_external_id_names_the_existing_transaction(rt: Runtime) -> None:
    account_id = await funded(rt)
    first = await cash_out.create(rt, account_id, order("1.00", "dup"))
    before = await footprint(rt)
    with pytest.raises(DuplicateExternalId) as refused:
        await cash_out.create(rt, account_id, order("2.00", "dup"))
    assert refused.value.details == {
        "externalId": "dup",
        "existingTransactionId": str(first.transaction_id),
    }
    assert await footprint(rt) == before
    assert await balance(rt, account_id) == (9900, 100)


async def test_the_same_external_id_in_another_account_is_no_duplicate(rt: Runtime) -> None:
    one, other = await funded(rt), await funded(rt)
    await cash_out.create(rt, one, order("1.00", "shared"))
    await cash_out.create(rt, other, order("1.00", "shared"))
    assert await balance(rt, one) == await balance(rt, other) == (9900, 100)
