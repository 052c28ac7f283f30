"""POST /sandbox/pix/pay and /sandbox/pix/incoming: a charge paid once, money in."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from pixgate.core.ids import is_end_to_end_id
from pixgate.core.pix.brcode import encode, static
from pixgate.runtime import Runtime
from tests.charges.test_cash_in import create_charge
from tests.helpers import assert_general_error, bearer, make_account
from tests.support import FixedClock, drain

PAY = "/sandbox/pix/pay"
INCOMING = "/sandbox/pix/incoming"
PAYER = {"name": "João Pagador", "document": "52998224725"}


async def state(rt: Runtime, account_id: int) -> dict[str, Any]:
    """Balance, the charge and its payment transaction, events: what a payment changes."""
    async with rt.db.connection() as conn:
        account = await conn.fetchrow(
            "SELECT available, blocked FROM accounts WHERE id = $1", account_id
        )
        charge = await conn.fetchrow("SELECT * FROM charges WHERE account_id = $1", account_id)
        tx = await conn.fetchrow(
            "SELECT * FROM transactions WHERE account_id = $1 AND operation = 'PAYMENT'",
            account_id,
        )
        events = await conn.fetch(
            "SELECT type, transaction_id FROM events WHERE account_id = $1", account_id
        )
    assert account is not None
    return {
        "available": account["available"],
        "blocked": account["blocked"],
        "charge": charge,
        "tx": tx,
        "events": [(e["type"], e["transaction_id"]) for e in events],
    }


async def set_cash_in_fee(rt: Runtime, account_id: int, fixed: str, percent: str) -> None:
    async with rt.db.begin() as conn:
        await conn.execute(
            "UPDATE accounts SET fees = $2 WHERE id = $1",
            account_id,
            {"cash_in": {"fixed": fixed, "percent": percent}},
        )


class TestPay:
    async def test_credits_net_confirms_and_writes_the_event(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver = await make_account(rt, name="Loja", balance="1.00")
        await set_cash_in_fee(rt, receiver.account_id, "0.50", "1.5")
        charge = await create_charge(client, await bearer(client, receiver), value="100.00")
        payer = await make_account(rt, name="Qualquer")
        response = await client.post(
            PAY,
            json={"pixCode": charge["pixCode"], "payer": PAYER},
            headers=await bearer(client, payer),
        )
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["transactionId"] == charge["transactionId"]
        assert is_end_to_end_id(body["endToEndId"]) and len(body["endToEndId"]) == 32

        after = await state(rt, receiver.account_id)
        fee = 50 + 150  # 0.50 + 1.5% of 100.00
        assert (after["available"], after["blocked"]) == (100 + 10000 - fee, 0)
        tx = after["tx"]
        assert (tx["status"], tx["amount"], tx["fee"]) == ("CONFIRMED", 10000, fee)
        assert tx["end_to_end_id"] == body["endToEndId"]
        assert tx["counterpart"]["name"] == "João Pagador"
        assert tx["counterpart"]["document"] == "52998224725"
        assert tx["counterpart"]["bank"]["bankISPB"] == body["endToEndId"][1:9]
        assert tx["processed_at"] is not None
        assert after["charge"]["status"] == "CONFIRMED"
        assert after["charge"]["paid_at"] == tx["processed_at"]
        assert after["events"] == [("cash_in", tx["id"])]
        # the payer's account is not touched: the money comes from outside
        assert (await state(rt, payer.account_id))["available"] == 0

    async def test_paid_twice_is_refused_and_credits_once(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver = await make_account(rt)
        headers = await bearer(client, receiver)
        charge = await create_charge(client, headers, value="10.00")
        body = {"pixCode": charge["pixCode"], "payer": PAYER}
        assert (await client.post(PAY, json=body, headers=headers)).status_code == 201
        again = await client.post(PAY, json=body, headers=headers)
        body = assert_general_error(again, 409)
        assert (body["message"], body["error"]) == ("the charge was already paid", "Conflict")
        after = await state(rt, receiver.account_id)
        assert after["available"] == 1000
        assert len(after["events"]) == 1

    async def test_concurrent_payments_credit_once(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver = await make_account(rt)
        headers = await bearer(client, receiver)
        charge = await create_charge(client, headers, value="25.00")
        body = {"pixCode": charge["pixCode"], "payer": PAYER}
        responses = await asyncio.gather(
            *(client.post(PAY, json=body, headers=headers) for _ in range(6))
        )
        assert sorted(r.status_code for r in responses) == [201] + [409] * 5
        after = await state(rt, receiver.account_id)
        assert after["available"] == 2500
        assert len(after["events"]) == 1
        async with rt.db.connection() as conn:
            assert (
                await conn.fetchval("SELECT count(*) FROM ledger_postings WHERE memo = 'credit'")
                == 3
            )

    async def test_expired_charge_is_refused_and_moves_nothing(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        rt.clock = FixedClock(datetime.now(UTC))
        receiver = await make_account(rt)
        headers = await bearer(client, receiver)
        charge = await create_charge(client, headers, transaction={"expirationTime": 60})
        rt.clock.advance(seconds=60)
        response = await client.post(
            PAY, json={"pixCode": charge["pixCode"], "payer": PAYER}, headers=headers
        )
        assert response.status_code == 409
        assert response.json()["message"] == "the charge has expired"
        after = await state(rt, receiver.account_id)
        assert (after["available"], after["tx"]["status"], after["events"]) == (0, "PENDING", [])
        assert after["charge"]["status"] == "PENDING" and after["charge"]["paid_at"] is None

    async def test_charge_closed_by_its_expiry_job_is_refused(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver = await make_account(rt)
        headers = await bearer(client, receiver)
        # in the database's past, so the worker finds the expiry job due
        rt.clock = FixedClock(datetime(2024, 1, 10, 12, tzinfo=UTC))
        charge = await create_charge(client, headers, transaction={"expirationTime": 60})
        rt.clock.advance(seconds=61)
        await drain(rt)
        before = await state(rt, receiver.account_id)
        assert (before["charge"]["status"], before["tx"]["status"]) == ("EXPIRED", "ERROR")
        response = await client.post(
            PAY, json={"pixCode": charge["pixCode"], "payer": PAYER}, headers=headers
        )
        assert response.status_code == 409
        assert response.json()["message"] == "the charge has expired"
        assert (await state(rt, receiver.account_id))["available"] == 0

    async def test_paid_at_in_the_past_is_recorded(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver = await make_account(rt)
        headers = await bearer(client, receiver)
        charge = await create_charge(client, headers)
        paid_at = datetime.now(UTC) - timedelta(days=95)
        response = await client.post(
            PAY,
            json={"pixCode": charge["pixCode"], "payer": PAYER, "paidAt": paid_at.isoformat()},
            headers=headers,
        )
        assert response.status_code == 201
        assert response.json()["endToEndId"][9:21] == f"{paid_at:%Y%m%d%H%M}"
        assert (await state(rt, receiver.account_id))["tx"]["processed_at"] == paid_at

    async def test_codes_that_are_not_our_charges(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        foreign = encode(static("fulano@example.com", "Fulano", "Recife", 100))
        response = await client.post(
            PAY, json={"pixCode": foreign, "payer": PAYER}, headers=headers
        )
        assert_general_error(response, 422)
        broken = await client.post(
            PAY, json={"pixCode": "000201nope", "payer": PAYER}, headers=headers
        )
        assert broken.status_code == 400
        bad_payer = await client.post(
            PAY,
            json={"pixCode": foreign, "payer": {**PAYER, "document": "52998224724"}},
            headers=headers,
        )
        assert bad_payer.status_code == 400

    async def test_requires_a_token(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        response = await client.post(PAY, json={"pixCode": "x", "payer": PAYER})
        assert response.status_code == 401

    async def test_not_mounted_outside_sandbox(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        rt.settings = rt.settings.model_copy(update={"sandbox": False})
        for path, body in (
            (PAY, {"pixCode": "x", "payer": PAYER}),
            (INCOMING, {"value": 1, "payer": PAYER}),
        ):
            response = await client.post(path, json=body, headers=headers)
            assert response.status_code == 404


class TestIncoming:
    async def test_credited_minus_fee_with_event(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        await set_cash_in_fee(rt, account.account_id, "0.10", "0")
        response = await client.post(
            INCOMING, json={"value": "12.34", "payer": PAYER}, headers=await bearer(client, account)
        )
        assert response.status_code == 201, response.text
        body = response.json()
        after = await state(rt, account.account_id)
        assert after["available"] == 1234 - 10
        tx = after["tx"]
        assert str(tx["transaction_id"]) == body["transactionId"]
        assert (tx["kind"], tx["status"], tx["amount"], tx["fee"]) == (
            "incoming",
            "CONFIRMED",
            1234,
            10,
        )
        assert tx["end_to_end_id"] == body["endToEndId"]
        assert after["events"] == [("cash_in", tx["id"])]

    async def test_invalid_values(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        for value in ("0", "1.001", "-1", "abc"):
            response = await client.post(
                INCOMING, json={"value": value, "payer": PAYER}, headers=headers
            )
            assert response.status_code == 400, value
        assert (await state(rt, account.account_id))["tx"] is None
