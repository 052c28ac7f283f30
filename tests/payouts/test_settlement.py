"""payouts.service.settlement.settle, called directly on held cash-outs: the settling bank's answer
posts the hold (CONFIRMED) or voids it and gives the limits back (ERROR), exactly once."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from pixgate.charges.service import charges
from pixgate.ledger.service import verify
from pixgate.payouts.service import cash_out
from pixgate.payouts.service import settlement as payouts
from pixgate.provider.base import Instructions
from pixgate.runtime import Runtime
from pixgate.sandbox import rules as scenarios
from tests.helpers import footprint
from tests.payouts.test_cash_out_service import FEE, funded, order
from tests.refunds.helpers import CPF, balance, stored
from tests.refunds.test_refunds_service import memos
from tests.support import FixedClock

HELD = [("hold", "available", -1060), ("hold", "blocked", 1060)]
"""10.00 with its 0.60 fee, held."""


async def held(rt: Runtime, scenario: str | None = None) -> tuple[int, Any]:
    """An account (100.00, fee 0.50 + 1%) with a 10.00 cash-out held: (account id, its row)."""
    rt.clock = FixedClock(datetime(2026, 11, 20, 12, 0, tzinfo=ZoneInfo("America/Sao_Paulo")))
    account_id = await funded(rt, fees=FEE)
    made = await cash_out.create(
        rt, account_id, order("10.00"), instructions=Instructions(scenario)
    )
    return account_id, await stored(rt, str(made.transaction_id))


async def events_of(rt: Runtime, transaction_id: int) -> list[str]:
    async with rt.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT type FROM events WHERE transaction_id = $1 ORDER BY id", transaction_id
        )
    return [r["type"] for r in rows]


async def test_confirmed_posts_the_hold_amount_to_the_bank_and_fee_to_revenue(
    rt: Runtime,
) -> None:
    account_id, row = await held(rt)
    await payouts.settle(rt, row["id"])
    settled = await stored(rt, str(row["transaction_id"]))
    assert settled["status"] == "CONFIRMED"
    assert settled["end_to_end_id"].startswith("E" + rt.settings.ispb)
    assert settled["error_code"] is None and settled["processed_at"] is not None
    assert await balance(rt, account_id) == (10000 - 1060, 0)
    assert await memos(rt, row["transaction_id"]) == [
        *HELD,
        ("post", "blocked", -1060),
        ("post", "settlement", 1000),
        ("post", "fees", 60),
    ]
    assert (await footprint(rt))["limit_usage"] == 1000
    assert await events_of(rt, row["id"]) == ["cash_out"]
    async with rt.db.connection() as conn:
        assert await verify.problems(conn) == []


@pytest.mark.parametrize("scenario", list(scenarios.SETTLEMENT_ERRORS))
async def test_error_voids_the_hold_and_gives_the_limit_usage_back(
    rt: Runtime, scenario: str
) -> None:
    account_id, row = await held(rt, scenario)
    assert (await footprint(rt))["limit_usage"] == 1000
    await payouts.settle(rt, row["id"])
    settled = await stored(rt, str(row["transaction_id"]))
    assert (settled["status"], settled["error_code"]) == ("ERROR", scenario)
    assert settled["error_message"] == scenarios.SETTLEMENT_ERRORS[scenario]
    assert await balance(rt, account_id) == (10000, 0)
    assert await memos(rt, row["transaction_id"]) == [
        *HELD,
        ("void", "blocked", -1060),
        ("void", "available", 1060),
    ]
    assert (await footprint(rt))["limit_usage"] == 0
    assert await events_of(rt, row["id"]) == ["cash_out"]
    async with rt.db.connection() as conn:
        assert await verify.problems(conn) == []


@pytest.mark.parametrize("scenario", [None, "ORDER_REJECTED"], ids=["confirmed", "error"])
async def test_a_second_settle_changes_nothing(rt: Runtime, scenario: str | None) -> None:
    account_id, row = await held(rt, scenario)
    await payouts.settle(rt, row["id"])
    after_first = (
        await footprint(rt),
        await balance(rt, account_id),
        await stored(rt, str(row["transaction_id"])),
    )
    await payouts.settle(rt, row["id"])
    assert (
        await footprint(rt),
        await balance(rt, account_id),
        await stored(rt, str(row["transaction_id"])),
    ) == after_first


async def test_an_unknown_or_received_transaction_is_left_alone(rt: Runtime) -> None:
    account_id, row = await held(rt)
    received = await charges.sandbox_incoming(
        rt, account_id, Decimal("5.00"), charges.Payer(name="Pagador", document=CPF)
    )
    before, money = await footprint(rt), await balance(rt, account_id)
    await payouts.settle(rt, received.id)
    await payouts.settle(rt, row["id"] + 1000)
    assert (await footprint(rt), await balance(rt, account_id)) == (before, money)
    assert (await stored(rt, str(received.transaction_id)))["status"] == "CONFIRMED"
