"""POST /api/pix/cash-out-qrcode: external codes and our charges."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from pixgate.accounts.service import accounts
from pixgate.core.pix.brcode import dynamic, encode, static
from pixgate.ledger.service import verify
from pixgate.runtime import Runtime
from tests.charges.test_cash_in import create_charge
from tests.helpers import assert_general_error, balance, bearer, make_account
from tests.sandbox.test_sandbox_pay import PAY, PAYER
from tests.support import drain

PATH = "/api/pix/cash-out-qrcode"
EMAIL_CODE = encode(static("fulano@example.com", "Fulano de Tal", "Recife", 1050, "PED1"))
OPEN_CODE = encode(static("fulano@example.com", "Fulano de Tal", "Recife"))
FOREIGN_DYNAMIC = encode(dynamic("pix.outrobanco.com.br/qr/v2/abc123", "Loja", "Natal", 700))


def qr(code: str, value: object, external_id: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "qrCode": code,
        "value": value,
        "externalId": external_id or f"qr-{uuid.uuid4()}",
        **extra,
    }


async def rows(rt: Runtime, account_id: int) -> list[Any]:
    async with rt.db.connection() as conn:
        return await conn.fetch(
            "SELECT * FROM transactions WHERE account_id = $1 ORDER BY id", account_id
        )


async def set_fee(rt: Runtime, account_id: int, operation: str, fixed: str) -> None:
    async with rt.db.begin() as conn:
        await conn.execute(
            "UPDATE accounts SET fees = fees || $2 WHERE id = $1",
            account_id,
            {operation: {"fixed": fixed, "percent": "0"}},
        )


class TestExternalCodes:
    async def test_static_code_pending_then_settled(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        payer = await make_account(rt, balance="50.00")
        await set_fee(rt, payer.account_id, "cash_out", "0.25")
        response = await client.post(
            PATH, json=qr(EMAIL_CODE, "10.50", "qr-1"), headers=await bearer(client, payer)
        )
        assert response.status_code == 201, response.text
        body = response.json()
        assert (body["status"], body["externalId"]) == ("PENDING", "qr-1")
        assert body["generateTime"].endswith("Z")
        assert await balance(rt, payer.account_id) == (5000 - 1075, 1075)
        await drain(rt)
        assert await balance(rt, payer.account_id) == (5000 - 1075, 0)
        [tx] = await rows(rt, payer.account_id)
        assert (tx["operation"], tx["kind"], tx["status"]) == (
            "WITHDRAW",
            "cash_out_qrcode",
            "CONFIRMED",
        )
        assert (tx["pix_key"], tx["pix_key_type"], tx["amount"], tx["fee"]) == (
            "fulano@example.com",
            "EMAIL",
            1050,
            25,
        )
        assert tx["details"]["qrCode"]["txid"] == "PED1"
        assert tx["counterpart"]["bank"]["bankISPB"]

    async def test_open_amount_and_foreign_dynamic_codes(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        payer = await make_account(rt, balance="50.00")
        headers = await bearer(client, payer)
        assert (
            await client.post(PATH, json=qr(OPEN_CODE, "3.00"), headers=headers)
        ).status_code == 201
        assert (
            await client.post(PATH, json=qr(FOREIGN_DYNAMIC, "7.00"), headers=headers)
        ).status_code == 201
        await drain(rt)
        txs = await rows(rt, payer.account_id)
        assert [(t["amount"], t["status"], t["pix_key_type"]) for t in txs] == [
            (300, "CONFIRMED", "EMAIL"),
            (700, "CONFIRMED", "LOCATION"),
        ]
        assert txs[1]["pix_key"] == "pix.outrobanco.com.br/qr/v2/abc123"
        assert await balance(rt, payer.account_id) == (4000, 0)

    async def test_asynchronous_scenario_returns_the_hold(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        payer = await make_account(rt, balance="20.00")
        headers = {**await bearer(client, payer), "X-Sandbox-Scenario": "ORDER_REJECTED"}
        assert (
            await client.post(PATH, json=qr(EMAIL_CODE, "10.50"), headers=headers)
        ).status_code == 201
        await drain(rt)
        [tx] = await rows(rt, payer.account_id)
        assert (tx["status"], tx["error_code"]) == ("ERROR", "ORDER_REJECTED")
        assert await balance(rt, payer.account_id) == (2000, 0)


INVALID = [
    ("bad crc", qr(EMAIL_CODE[:-4] + "0000", "10.50")),
    ("too short", qr("000201" + "0" * 40, "1.00")),
    ("too long", qr("000201" + "0" * 495, "1.00")),
    ("wrong start", qr("100201" + EMAIL_CODE[6:], "10.50")),
    ("mismatched amount", qr(EMAIL_CODE, "10.49")),
    ("three decimals", qr(OPEN_CODE, "1.001")),
    ("zero", qr(OPEN_CODE, "0")),
    ("bad document", qr(OPEN_CODE, "1.00", document="123")),
    ("no externalId", {"qrCode": OPEN_CODE, "value": 1}),
]


class TestRefusals:
    @pytest.mark.parametrize(("case", "body"), INVALID, ids=[c for c, _ in INVALID])
    async def test_400_in_envelope_nothing_moved(
        self, rt: Runtime, client: httpx.AsyncClient, case: str, body: dict[str, Any]
    ) -> None:
        payer = await make_account(rt, balance="50.00")
        response = await client.post(PATH, json=body, headers=await bearer(client, payer))
        assert_general_error(response, 400)
        assert await rows(rt, payer.account_id) == []
        assert await balance(rt, payer.account_id) == (5000, 0)

    async def test_insufficient_balance(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        payer = await make_account(rt, balance="10.00")
        response = await client.post(
            PATH, json=qr(EMAIL_CODE, "10.50"), headers=await bearer(client, payer)
        )
        assert response.status_code == 400
        assert await rows(rt, payer.account_id) == []

    async def test_reused_external_id_is_409(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        payer = await make_account(rt, balance="50.00")
        headers = await bearer(client, payer)
        first = await client.post(PATH, json=qr(OPEN_CODE, "1.00", "dup"), headers=headers)
        again = await client.post(PATH, json=qr(OPEN_CODE, "2.00", "dup"), headers=headers)
        assert (first.status_code, again.status_code) == (201, 409)
        assert again.json()["statusCode"] == 409
        assert len(await rows(rt, payer.account_id)) == 1

    async def test_provider_unavailable_scenario(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        payer = await make_account(rt, balance="50.00")
        headers = {**await bearer(client, payer), "X-Sandbox-Scenario": "PROVIDER_UNAVAILABLE"}
        response = await client.post(PATH, json=qr(OPEN_CODE, "1.00"), headers=headers)
        assert response.status_code == 500
        assert await rows(rt, payer.account_id) == []


class TestOurCharges:
    async def test_settles_internally_and_atomically(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver = await make_account(rt, name="Loja Recebedora", document="11222333000181")
        payer = await make_account(rt, name="Cliente Pagador", balance="50.00")
        await set_fee(rt, payer.account_id, "cash_out", "0.25")
        await set_fee(rt, receiver.account_id, "cash_in", "0.40")
        charge = await create_charge(client, await bearer(client, receiver), value="10.00")
        response = await client.post(
            PATH, json=qr(charge["pixCode"], "10.00", "pay-1"), headers=await bearer(client, payer)
        )
        assert response.status_code == 201, response.text
        assert response.json()["status"] == "CONFIRMED"

        assert await balance(rt, payer.account_id) == (5000 - 1025, 0)
        assert await balance(rt, receiver.account_id) == (1000 - 40, 0)
        [sent] = await rows(rt, payer.account_id)
        [received] = await rows(rt, receiver.account_id)
        assert (sent["operation"], sent["status"], sent["amount"], sent["fee"]) == (
            "WITHDRAW",
            "CONFIRMED",
            1000,
            25,
        )
        assert (received["status"], received["amount"], received["fee"]) == ("CONFIRMED", 1000, 40)
        assert str(received["transaction_id"]) == charge["transactionId"]
        assert sent["end_to_end_id"] == received["end_to_end_id"]
        assert sent["end_to_end_id"].startswith("E" + rt.settings.ispb)
        assert sent["counterpart"]["name"] == "Loja Recebedora"
        assert sent["counterpart"]["document"] == "11222333000181"
        assert received["counterpart"]["name"] == "Cliente Pagador"
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT status FROM charges") == "CONFIRMED"
            events = await conn.fetch("SELECT account_id, type FROM events ORDER BY id")
            books = {
                r["book"]: r["total"]
                for r in await conn.fetch(
                    "SELECT book, sum(amount) AS total FROM ledger_postings "
                    "WHERE account_id IS NULL GROUP BY book"
                )
            }
            assert await verify.problems(conn) == []
        assert sorted((e["account_id"], e["type"]) for e in events) == sorted(
            [(receiver.account_id, "cash_in"), (payer.account_id, "cash_out")]
        )
        assert books["settlement"] == 0  # out of the payer, back in to the receiver
        assert books["fees"] == 25 + 40
        assert await drain(rt) == 0  # nothing left to settle

    async def test_own_charge_is_refused(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt, balance="50.00")
        headers = await bearer(client, account)
        charge = await create_charge(client, headers, value="10.00")
        response = await client.post(PATH, json=qr(charge["pixCode"], "10.00"), headers=headers)
        assert response.status_code == 400
        assert "own charge" in response.json()["message"]
        assert await balance(rt, account.account_id) == (5000, 0)

    async def test_paid_charge_is_refused_and_nothing_moves(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver = await make_account(rt)
        payer = await make_account(rt, balance="50.00")
        receiver_headers = await bearer(client, receiver)
        charge = await create_charge(client, receiver_headers, value="10.00")
        paid = await client.post(
            PAY, json={"pixCode": charge["pixCode"], "payer": PAYER}, headers=receiver_headers
        )
        assert paid.status_code == 201
        response = await client.post(
            PATH, json=qr(charge["pixCode"], "10.00"), headers=await bearer(client, payer)
        )
        assert response.status_code == 400
        assert "already paid" in response.json()["message"]
        assert await balance(rt, payer.account_id) == (5000, 0)
        assert await rows(rt, payer.account_id) == []
        assert await balance(rt, receiver.account_id) == (1000, 0)

    async def test_insufficient_balance_leaves_the_charge_open(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver = await make_account(rt)
        payer = await make_account(rt, balance="9.99")
        charge = await create_charge(client, await bearer(client, receiver), value="10.00")
        response = await client.post(
            PATH, json=qr(charge["pixCode"], "10.00"), headers=await bearer(client, payer)
        )
        assert response.status_code == 400
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT status FROM charges") == "PENDING"
            assert await conn.fetchval("SELECT count(*) FROM events") == 0
        assert await balance(rt, receiver.account_id) == (0, 0)
        assert await balance(rt, payer.account_id) == (999, 0)

    async def test_our_charge_is_held_to_the_payers_limits_and_counted_by_them(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """Paid in the house, a QR cash-out is accepted like any payout: over the per-transaction
        limit it is refused with nothing written and the charge left open; within it, it counts
        toward the day, so the next one over the daily limit is refused."""
        receiver = await make_account(rt)
        payer = await make_account(rt, balance="100.00")
        await accounts.update(rt, payer.account_id, {"transaction_limit": 1500})
        receiver_headers, payer_headers = (
            await bearer(client, receiver),
            await bearer(client, payer),
        )
        big = await create_charge(client, receiver_headers, value="20.00")
        refused = await client.post(PATH, json=qr(big["pixCode"], "20.00"), headers=payer_headers)
        assert refused.status_code == 400
        assert refused.json()["code"] == "PIX_TRANSACTION_LIMIT_EXCEEDED"
        assert await rows(rt, payer.account_id) == []
        assert await balance(rt, payer.account_id) == (10000, 0)
        assert await balance(rt, receiver.account_id) == (0, 0)

        await accounts.update(rt, payer.account_id, {"daily_limit": 2500})
        first = await create_charge(client, receiver_headers, value="15.00")
        paid = await client.post(PATH, json=qr(first["pixCode"], "15.00"), headers=payer_headers)
        assert paid.status_code == 201
        second = await create_charge(client, receiver_headers, value="15.00")
        over = await client.post(PATH, json=qr(second["pixCode"], "15.00"), headers=payer_headers)
        assert over.json()["code"] == "PIX_DAILY_LIMIT_EXCEEDED"
        assert await balance(rt, payer.account_id) == (10000 - 1500, 0)
        async with rt.db.connection() as conn:
            statuses = await conn.fetch("SELECT status FROM charges ORDER BY id")
            assert [r["status"] for r in statuses] == ["PENDING", "CONFIRMED", "PENDING"]
            assert await verify.problems(conn) == []

    async def test_two_payers_race_one_wins(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        receiver = await make_account(rt)
        charge = await create_charge(client, await bearer(client, receiver), value="10.00")
        payers = [await make_account(rt, balance="20.00") for _ in range(4)]
        headers = [await bearer(client, p) for p in payers]
        sandbox = client.post(
            PAY, json={"pixCode": charge["pixCode"], "payer": PAYER}, headers=headers[0]
        )
        responses = await asyncio.gather(
            sandbox,
            *(client.post(PATH, json=qr(charge["pixCode"], "10.00"), headers=h) for h in headers),
        )
        assert sum(r.status_code == 201 for r in responses) == 1
        assert all(r.status_code in (201, 400, 409) for r in responses)
        assert await balance(rt, receiver.account_id) == (1000, 0)
        spent = sorted([2000 - sum(await balance(rt, p.account_id)) for p in payers])
        assert spent in ([0, 0, 0, 0], [0, 0, 0, 1000])  # the winner may be the sandbox payer

    async def test_crossed_payments_do_not_deadlock(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        one = await make_account(rt, balance="50.00")
        two = await make_account(rt, balance="50.00")
        h1, h2 = await bearer(client, one), await bearer(client, two)
        for _ in range(3):
            c1 = await create_charge(client, h1, value="1.00")
            c2 = await create_charge(client, h2, value="2.00")
            r1, r2 = await asyncio.gather(
                client.post(PATH, json=qr(c2["pixCode"], "2.00"), headers=h1),
                client.post(PATH, json=qr(c1["pixCode"], "1.00"), headers=h2),
            )
            assert (r1.status_code, r2.status_code) == (201, 201), (r1.text, r2.text)
        assert await balance(rt, one.account_id) == (5000 - 600 + 300, 0)
        assert await balance(rt, two.account_id) == (5000 - 300 + 600, 0)
