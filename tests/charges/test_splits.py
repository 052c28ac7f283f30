"""Split payouts of a paid charge: shares to the cent, immediate or on schedule.

Reconciliation checked on every paid charge: gross = cash-in fee + sum(payouts) + what
stays with the account.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from pixgate.charges.service import splits
from pixgate.jobs.queue import RUN_DUE_SPLITS
from pixgate.runtime import Runtime
from tests.charges.test_cash_in import create_charge, split
from tests.helpers import bearer, make_account
from tests.sandbox.test_sandbox_pay import PAY, PAYER, set_cash_in_fee
from tests.support import FixedClock, drain


async def pay(client: httpx.AsyncClient, headers: dict[str, str], charge: dict[str, Any]) -> None:
    response = await client.post(
        PAY, json={"pixCode": charge["pixCode"], "payer": PAYER}, headers=headers
    )
    assert response.status_code == 201, response.text


async def payouts(rt: Runtime, account_id: int) -> list[Any]:
    async with rt.db.connection() as conn:
        return await conn.fetch(
            "SELECT * FROM transactions WHERE account_id = $1 AND kind = 'split_payout' "
            "ORDER BY id",
            account_id,
        )


async def reconcile(rt: Runtime, account_id: int, start_balance: int) -> dict[str, int]:
    """The books of one account with one paid charge, all payouts settled."""
    async with rt.db.connection() as conn:
        payment = await conn.fetchrow(
            "SELECT * FROM transactions WHERE account_id = $1 AND operation = 'PAYMENT'", account_id
        )
        available = await conn.fetchval("SELECT available FROM accounts WHERE id = $1", account_id)
    assert payment is not None
    paid = [p for p in await payouts(rt, account_id) if p["status"] == "CONFIRMED"]
    assert all(p["parent_id"] == payment["id"] and p["fee"] == 0 for p in paid)
    remainder = available - start_balance
    assert payment["amount"] == payment["fee"] + sum(p["amount"] for p in paid) + remainder
    return {
        "gross": payment["amount"],
        "fee": payment["fee"],
        "payouts": sum(p["amount"] for p in paid),
        "remainder": remainder,
    }


class TestShares:
    @pytest.mark.parametrize(
        ("value", "parts", "shares"),
        [
            ("100.00", [split("33.33")] * 3, [3333, 3333, 3333]),
            ("10.01", [split("33.33")] * 3, [334, 334, 333]),
            ("0.10", [split("33.33")] * 3, [4, 3, 3]),
            ("99.99", [split("33.3333")] * 3, [3333, 3333, 3333]),
            ("10.00", [split("1.25", "FIXED"), split("12.5"), split("0.05")], [125, 125, 1]),
        ],
    )
    async def test_immediate_payouts_balance_to_the_cent(
        self,
        rt: Runtime,
        client: httpx.AsyncClient,
        value: str,
        parts: list[dict[str, Any]],
        shares: list[int],
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        charge = await create_charge(client, headers, value=value, splits=parts)
        await pay(client, headers, charge)
        pending = await payouts(rt, account.account_id)
        assert [p["amount"] for p in pending] == [s for s in shares if s]
        assert all(p["status"] == "PENDING" for p in pending)
        await drain(rt)
        settled = await payouts(rt, account.account_id)
        assert all(p["status"] == "CONFIRMED" and p["end_to_end_id"] for p in settled)
        books = await reconcile(rt, account.account_id, 0)
        assert books["payouts"] == sum(shares)
        assert books["remainder"] == books["gross"] - sum(shares)

    async def test_with_a_fee_the_remainder_pays_it(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        await set_cash_in_fee(rt, account.account_id, "0.99", "0")
        headers = await bearer(client, account)
        charge = await create_charge(
            client, headers, value="100.00", splits=[split("33.33")] * 2 + [split("10.00", "FIXED")]
        )
        await pay(client, headers, charge)
        await drain(rt)
        assert await reconcile(rt, account.account_id, 0) == {
            "gross": 10000,
            "fee": 99,
            "payouts": 3333 * 2 + 1000,
            "remainder": 2235,
        }

    async def test_payout_goes_to_the_split_key(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        charge = await create_charge(
            client,
            headers,
            value="10.00",
            splits=[
                split(
                    "2.00",
                    "FIXED",
                    pixKey="Parceiro@Example.com",
                    pixKeyType="EMAIL",
                    name="Parceiro Ltda",
                )
            ],
        )
        await pay(client, headers, charge)
        await drain(rt)
        [payout] = await payouts(rt, account.account_id)
        assert (payout["operation"], payout["pix_key"], payout["pix_key_type"]) == (
            "WITHDRAW",
            "parceiro@example.com",
            "EMAIL",
        )
        assert payout["counterpart"]["document"] == "11222333000181"
        async with rt.db.connection() as conn:
            events = await conn.fetch("SELECT type, transaction_id FROM events ORDER BY id")
        assert [(e["type"]) for e in events] == ["cash_in", "cash_out"]
        assert events[1]["transaction_id"] == payout["id"]

    async def test_a_payout_the_account_cannot_cover_fails_without_refusing_the_payment(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        charge = await create_charge(client, headers, value="10.00", splits=[split("100")])
        await set_cash_in_fee(rt, account.account_id, "1.00", "0")  # raised after creation
        await pay(client, headers, charge)
        [payout] = await payouts(rt, account.account_id)
        assert (payout["status"], payout["error_code"]) == ("ERROR", "PIX_INSUFFICIENT_BALANCE")
        async with rt.db.connection() as conn:
            balance = await conn.fetchval("SELECT available FROM accounts")
        assert balance == 900


class TestSchedule:
    def test_next_run(self) -> None:
        now = datetime(2024, 1, 10, 10, 15, tzinfo=UTC)  # 07:15 in São Paulo
        tz = "America/Sao_Paulo"
        assert splits.next_run("immediate", now, tz) is None
        assert splits.next_run("hourly", now, tz) == datetime(2024, 1, 10, 11, tzinfo=UTC)
        assert splits.next_run("daily", now, tz) == datetime(2024, 1, 11, 3, tzinfo=UTC)

    async def test_hourly_account_pays_at_the_boundary_with_one_job(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        async with rt.db.begin() as conn:
            await conn.execute("UPDATE accounts SET split_frequency = 'hourly'")
        headers = await bearer(client, account)
        # an hour boundary in the past of the database's clock, so the worker finds it due
        rt.clock = FixedClock(datetime(2024, 1, 10, 10, 15, tzinfo=UTC))
        first = await create_charge(
            client,
            headers,
            value="10.00",
            splits=[split("10"), split("1.00", "FIXED", immediate=True)],
        )
        second = await create_charge(client, headers, value="20.00", splits=[split("10")])
        await pay(client, headers, first)
        await pay(client, headers, second)
        # only the immediate split left at once; one run is queued for 11:00
        assert [p["amount"] for p in await payouts(rt, account.account_id)] == [100]
        async with rt.db.connection() as conn:
            jobs = await conn.fetch(
                "SELECT run_at, args FROM jobs WHERE kind = $1", RUN_DUE_SPLITS.name
            )
        assert [(j["run_at"], j["args"]["account_id"]) for j in jobs] == [
            (datetime(2024, 1, 10, 11, tzinfo=UTC), account.account_id)
        ]
        await drain(rt)
        paid = await payouts(rt, account.account_id)
        assert sorted(p["amount"] for p in paid) == [100, 100, 200]
        assert all(p["status"] == "CONFIRMED" for p in paid)
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT available FROM accounts") == 3000 - 400
        # running the job again pays nothing twice
        assert (
            await splits.run_due(rt, account.account_id, datetime(2024, 1, 10, 11, tzinfo=UTC)) == 0
        )
