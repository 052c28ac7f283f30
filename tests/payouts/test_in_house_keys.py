"""Payments to one of our accounts' PIX keys settle in the house: POST /api/pix/cash-out and
POST /dict/pix debit the payer and credit the receiver at once, without the bank."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import orjson

from pixgate.accounts.service import accounts, keys
from pixgate.core.pix.brcode import encode, static
from pixgate.ledger.service import verify
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from tests.app.api_pix_document import assert_conforms
from tests.helpers import balance, bearer, make_account
from tests.payouts.test_cash_out_qrcode import set_fee
from tests.payouts.test_dict_transfer import post_transfer, register_key
from tests.refunds.api_pix_helpers import BASE, scoped
from tests.support import drain
from tests.webhooks.receiver import Receiver

CASH_OUT = "/api/pix/cash-out"
RECEIVER_CNPJ = "11222333000181"
PAYER_CPF = "52998224725"


def cash_out(
    key: str, key_type: str, value: str = "10.00", external_id: str | None = None, **more: Any
) -> dict[str, Any]:
    return {
        "value": value,
        "externalId": external_id or f"ext-{uuid.uuid4()}",
        "description": "aluguel",
        "details": {
            "key": key,
            "keyType": key_type,
            "name": "Loja Recebedora",
            "document": RECEIVER_CNPJ,
            **more,
        },
    }


def transfer(key: str, amount: float = 10.0, **more: Any) -> dict[str, Any]:
    return {"pixKey": key, "payment": {"currency": "BRL", "amount": amount}, **more}


async def rows(rt: Runtime, account_id: int) -> list[Any]:
    async with rt.db.connection() as conn:
        return await conn.fetch(
            "SELECT * FROM transactions WHERE account_id = $1 ORDER BY id", account_id
        )


async def events(rt: Runtime) -> list[tuple[int, str]]:
    async with rt.db.connection() as conn:
        found = await conn.fetch("SELECT account_id, type FROM events ORDER BY id")
    return [(e["account_id"], e["type"]) for e in found]


async def ledger_verifies(rt: Runtime) -> None:
    async with rt.db.connection() as conn:
        assert await verify.problems(conn) == []


async def statement(client: httpx.AsyncClient, headers: dict[str, str]) -> list[dict[str, Any]]:
    response = await client.get("/api/transactions", headers=headers)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


async def parties(
    rt: Runtime, client: httpx.AsyncClient, *, payer_balance: str = "100.00"
) -> tuple[accounts.NewAccount, dict[str, str], accounts.NewAccount, dict[str, str]]:
    receiver = await make_account(rt, name="Loja Recebedora", document=RECEIVER_CNPJ)
    payer = await make_account(
        rt, name="Cliente Pagador", document=PAYER_CPF, balance=payer_balance
    )
    return receiver, await bearer(client, receiver), payer, await bearer(client, payer)


class TestCashOut:
    async def test_settles_in_the_house_with_both_sides_right(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, receiver_headers, payer, payer_headers = await parties(rt, client)
        await set_fee(rt, payer.account_id, "cash_out", "0.25")
        await set_fee(rt, receiver.account_id, "cash_in", "0.40")
        await keys.add(rt, receiver.account_id, "Caixa@Loja.com")

        response = await client.post(
            CASH_OUT,
            json=cash_out("caixa@loja.COM", "EMAIL", external_id="aluguel-1"),
            headers=payer_headers,
        )
        assert response.status_code == 201, response.text
        assert (response.json()["status"], response.json()["externalId"]) == (
            "CONFIRMED",
            "aluguel-1",
        )
        assert await balance(rt, payer.account_id) == (10000 - 1025, 0)
        assert await balance(rt, receiver.account_id) == (1000 - 40, 0)

        [sent] = await rows(rt, payer.account_id)
        [received] = await rows(rt, receiver.account_id)
        assert (sent["operation"], sent["kind"], sent["status"]) == (
            "WITHDRAW",
            "cash_out",
            "CONFIRMED",
        )
        assert (sent["amount"], sent["fee"], sent["pix_key"]) == (1000, 25, "caixa@loja.com")
        assert (sent["counterpart"]["name"], sent["counterpart"]["document"]) == (
            "Loja Recebedora",
            RECEIVER_CNPJ,
        )
        assert sent["counterpart_account_id"] == receiver.account_id
        assert (received["operation"], received["kind"], received["status"]) == (
            "PAYMENT",
            "incoming",
            "CONFIRMED",
        )
        assert (received["amount"], received["fee"], received["pix_key"]) == (
            1000,
            40,
            "caixa@loja.com",
        )
        assert received["counterpart"]["name"] == "Cliente Pagador"
        assert received["counterpart"]["document"] == PAYER_CPF
        assert received["counterpart"]["bank"]["bankISPB"] == rt.settings.ispb
        assert received["counterpart_account_id"] == payer.account_id
        assert received["counterpart_ispb"] == rt.settings.ispb
        assert received["details"]["infoPagador"] == "aluguel"
        assert sent["end_to_end_id"] == received["end_to_end_id"]
        assert sent["end_to_end_id"].startswith("E" + rt.settings.ispb)

        assert sorted(await events(rt)) == sorted(
            [(payer.account_id, "cash_out"), (receiver.account_id, "cash_in")]
        )
        [debit] = await statement(client, payer_headers)
        [credit] = await statement(client, receiver_headers)
        assert (debit["operationType"], debit["movementType"], debit["finalAmount"]) == (
            "Pix out",
            "DEBIT",
            10.25,
        )
        assert (credit["operationType"], credit["movementType"], credit["finalAmount"]) == (
            "Pix in",
            "CREDIT",
            9.60,
        )
        assert await drain(rt) >= 0
        assert await balance(rt, payer.account_id) == (10000 - 1025, 0)
        assert await balance(rt, receiver.account_id) == (1000 - 40, 0)
        await ledger_verifies(rt)

    async def test_every_key_type_of_ours_is_found_in_any_spelling(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, _, payer_headers = await parties(rt, client)
        await keys.add(rt, receiver.account_id, RECEIVER_CNPJ)
        await keys.add(rt, receiver.account_id, "+5511987654321")
        evp = receiver.pix_key
        for key, key_type in [
            (RECEIVER_CNPJ, "DOCUMENT"),
            ("11987654321", "PHONE"),
            (evp.upper(), "RANDOM"),
            (evp.replace("-", ""), "RANDOM"),
        ]:
            response = await client.post(
                CASH_OUT, json=cash_out(key, key_type, "1.00"), headers=payer_headers
            )
            assert response.status_code == 201, response.text
            assert response.json()["status"] == "CONFIRMED"
        received = await rows(rt, receiver.account_id)
        assert [r["pix_key"] for r in received] == [
            RECEIVER_CNPJ,
            "+5511987654321",
            evp,
            evp,
        ]
        assert await balance(rt, receiver.account_id) == (400, 0)
        assert await drain(rt) == 0  # nothing for the bank
        await ledger_verifies(rt)

    async def test_own_key_is_refused_and_nothing_moves(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50.00")
        headers = await bearer(client, account)
        response = await client.post(
            CASH_OUT, json=cash_out(account.pix_key, "RANDOM"), headers=headers
        )
        assert response.status_code == 400
        assert response.json()["code"] == "PIX_OWN_KEY"
        assert await rows(rt, account.account_id) == []
        assert await balance(rt, account.account_id) == (5000, 0)

    async def test_limits_refuse_and_count(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client)
        await accounts.update(rt, payer.account_id, {"transaction_limit": 1500})
        over = await client.post(
            CASH_OUT, json=cash_out(receiver.pix_key, "RANDOM", "20.00"), headers=payer_headers
        )
        assert over.status_code == 400
        assert over.json()["code"] == "PIX_TRANSACTION_LIMIT_EXCEEDED"
        assert await rows(rt, payer.account_id) == []
        assert await rows(rt, receiver.account_id) == []

        await accounts.update(rt, payer.account_id, {"daily_limit": 2500})
        paid = await client.post(
            CASH_OUT, json=cash_out(receiver.pix_key, "RANDOM", "15.00"), headers=payer_headers
        )
        assert paid.status_code == 201
        again = await client.post(
            CASH_OUT, json=cash_out(receiver.pix_key, "RANDOM", "15.00"), headers=payer_headers
        )
        assert again.json()["code"] == "PIX_DAILY_LIMIT_EXCEEDED"
        assert await balance(rt, payer.account_id) == (10000 - 1500, 0)
        assert await balance(rt, receiver.account_id) == (1500, 0)
        await ledger_verifies(rt)

    async def test_external_id_once_and_balance_short(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client, payer_balance="15.00")
        body = cash_out(receiver.pix_key, "RANDOM", external_id="once")
        assert (await client.post(CASH_OUT, json=body, headers=payer_headers)).status_code == 201
        repeat = await client.post(CASH_OUT, json=body, headers=payer_headers)
        assert repeat.status_code == 400
        assert repeat.json()["code"] == "PIX_DUPLICATE_EXTERNAL_ID"
        short = await client.post(
            CASH_OUT, json=cash_out(receiver.pix_key, "RANDOM"), headers=payer_headers
        )
        assert short.status_code == 400
        assert short.json()["code"] == "PIX_INSUFFICIENT_BALANCE"
        assert len(await rows(rt, payer.account_id)) == 1
        assert await balance(rt, payer.account_id) == (500, 0)
        assert await balance(rt, receiver.account_id) == (1000, 0)
        await ledger_verifies(rt)

    async def test_another_document_ends_in_error_without_debit(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client)
        response = await client.post(
            CASH_OUT,
            json=cash_out(receiver.pix_key, "RANDOM", document=PAYER_CPF),
            headers=payer_headers,
        )
        assert response.status_code == 201
        assert response.json()["status"] == "ERROR"
        [sent] = await rows(rt, payer.account_id)
        assert (sent["status"], sent["error_code"]) == ("ERROR", "TAX_ID_MISMATCH")
        assert await rows(rt, receiver.account_id) == []
        assert await balance(rt, payer.account_id) == (10000, 0)
        assert await events(rt) == [(payer.account_id, "cash_out")]
        await ledger_verifies(rt)

    async def test_two_racing_with_enough_for_one(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client, payer_balance="10.00")
        responses = await asyncio.gather(
            *(
                client.post(
                    CASH_OUT, json=cash_out(receiver.pix_key, "RANDOM"), headers=payer_headers
                )
                for _ in range(2)
            )
        )
        assert sorted(r.status_code for r in responses) == [201, 400]
        assert [r.json()["code"] for r in responses if r.status_code == 400] == [
            "PIX_INSUFFICIENT_BALANCE"
        ]
        assert await balance(rt, payer.account_id) == (0, 0)
        assert await balance(rt, receiver.account_id) == (1000, 0)
        assert len(await rows(rt, receiver.account_id)) == 1
        await ledger_verifies(rt)

    async def test_a_removed_key_goes_to_the_bank(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client)
        await keys.remove(rt, receiver.account_id, receiver.pix_key)
        response = await client.post(
            CASH_OUT, json=cash_out(receiver.pix_key, "RANDOM"), headers=payer_headers
        )
        assert response.json()["status"] == "PENDING"
        await drain(rt)
        assert await rows(rt, receiver.account_id) == []
        [sent] = await rows(rt, payer.account_id)
        assert sent["counterpart_account_id"] is None
        assert sent["counterpart"]["bank"]["bankISPB"] != rt.settings.ispb


class TestDictTransfer:
    async def test_settles_in_the_house(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client)
        await set_fee(rt, payer.account_id, "dict_transfer", "0.10")
        await keys.add(rt, receiver.account_id, "+5521999998888")
        response = await post_transfer(
            client,
            payer_headers,
            transfer("+5521999998888", 12.5, creditorDocument=RECEIVER_CNPJ, description="oi"),
        )
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["type"] == "COMPLETED"
        assert await balance(rt, payer.account_id) == (10000 - 1260, 0)
        assert await balance(rt, receiver.account_id) == (1250, 0)
        [sent] = await rows(rt, payer.account_id)
        [received] = await rows(rt, receiver.account_id)
        assert (sent["kind"], sent["status"], sent["fee"]) == ("dict_transfer", "CONFIRMED", 10)
        assert body["endToEndId"] == sent["end_to_end_id"] == received["end_to_end_id"]
        assert (received["pix_key"], received["counterpart"]["name"]) == (
            "+5521999998888",
            "Cliente Pagador",
        )
        assert received["details"]["infoPagador"] == "oi"
        assert sorted(await events(rt)) == sorted(
            [(payer.account_id, "cash_out"), (receiver.account_id, "cash_in")]
        )
        assert await drain(rt) == 0
        await ledger_verifies(rt)

    async def test_idempotency_key_replays_once(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client)
        key = str(uuid.uuid4())
        answers = await asyncio.gather(
            *(
                post_transfer(client, payer_headers, transfer(receiver.pix_key), key)
                for _ in range(5)
            )
        )
        assert {a.status_code for a in answers} == {201}
        assert len({a.json()["endToEndId"] for a in answers}) == 1
        assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 4
        changed = await post_transfer(client, payer_headers, transfer(receiver.pix_key, 11), key)
        assert changed.status_code == 422
        assert await balance(rt, payer.account_id) == (9000, 0)
        assert await balance(rt, receiver.account_id) == (1000, 0)
        assert len(await rows(rt, receiver.account_id)) == 1
        await ledger_verifies(rt)

    async def test_refusals(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client, payer_balance="5.00")
        own = await post_transfer(client, payer_headers, transfer(payer.pix_key))
        assert own.status_code == 400
        assert "own PIX key" in own.json()["message"]
        denied = await post_transfer(
            client, payer_headers, transfer(receiver.pix_key, ispbDeny=[rt.settings.ispb])
        )
        assert denied.status_code == 422
        short = await post_transfer(client, payer_headers, transfer(receiver.pix_key))
        assert short.status_code == 422
        mismatch = await post_transfer(
            client, payer_headers, transfer(receiver.pix_key, 1, creditorDocument=PAYER_CPF)
        )
        assert mismatch.status_code == 201
        assert mismatch.json()["type"] == "ERROR"
        [sent] = await rows(rt, payer.account_id)
        assert (sent["status"], sent["error_code"]) == ("ERROR", "TAX_ID_MISMATCH")
        assert await rows(rt, receiver.account_id) == []
        assert await balance(rt, payer.account_id) == (500, 0)
        await ledger_verifies(rt)

    async def test_limits_counted_as_any_transfer(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client)
        await accounts.update(rt, payer.account_id, {"daily_limit": 1500})
        sent = await post_transfer(client, payer_headers, transfer(receiver.pix_key, 10))
        assert sent.status_code == 201
        over = await client.post(
            CASH_OUT, json=cash_out(receiver.pix_key, "RANDOM", "6.00"), headers=payer_headers
        )
        assert over.json()["code"] == "PIX_DAILY_LIMIT_EXCEEDED"
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT sum(used) FROM limit_usage") == 1000
        await ledger_verifies(rt)


class TestDictResolution:
    async def test_our_key_resolves_to_its_account(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, _, _ = await parties(rt, client)
        holder = await rt.provider.lookup_key(receiver.pix_key, "EVP")
        assert holder is not None
        assert (holder.name, holder.document, holder.ispb) == (
            "Loja Recebedora",
            RECEIVER_CNPJ,
            rt.settings.ispb,
        )
        assert holder.account_number == str(receiver.account_id)

    async def test_our_key_wins_over_a_sandbox_registration(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, receiver_headers, _, _ = await parties(rt, client)
        email = "maria.silva@example.com"
        await register_key(client, receiver_headers)
        before = await rt.provider.lookup_key(email, "EMAIL")
        assert before is not None and before.ispb != rt.settings.ispb
        await keys.add(rt, receiver.account_id, email)
        after = await rt.provider.lookup_key(email, "EMAIL")
        assert after is not None
        assert (after.name, after.ispb) == ("Loja Recebedora", rt.settings.ispb)


class TestReceivedSide:
    async def test_the_api_pix_shows_it_received_by_the_key_and_it_returns_in_the_house(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """GET /pix/{e2eid} of the receiver shows the payment with its key as `chave`; a
        devolucao of it returns in the house, crediting the payer."""
        receiver, _, payer, payer_headers = await parties(rt, client)
        await keys.add(rt, receiver.account_id, "caixa@loja.com")
        sent = await client.post(
            CASH_OUT, json=cash_out("caixa@loja.com", "EMAIL"), headers=payer_headers
        )
        assert sent.status_code == 201
        [received] = await rows(rt, receiver.account_id)
        e2e = received["end_to_end_id"]
        reader = await scoped(client, receiver, "pix.read pix.write")
        answer = await client.get(f"{BASE}/pix/{e2e}", headers=reader)
        assert answer.status_code == 200, answer.text
        pix = assert_conforms(answer, "get", "/pix/{e2eid}")
        assert (pix["endToEndId"], pix["chave"], pix["valor"]) == (e2e, "caixa@loja.com", "10.00")
        assert pix["infoPagador"] == "aluguel"

        returned = await client.put(
            f"{BASE}/pix/{e2e}/devolucao/d1", json={"valor": "4.00"}, headers=reader
        )
        assert returned.status_code == 201, returned.text
        await drain(rt)
        assert await balance(rt, receiver.account_id) == (1000 - 400, 0)
        assert await balance(rt, payer.account_id) == (10000 - 1000 + 400, 0)
        await ledger_verifies(rt)

    async def test_both_webhooks_are_delivered(
        self, rt: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
        to, _, payer, payer_headers = await parties(rt, client)
        await webhooks.add(rt, to.account_id, event_type="cash_in", url=receiver.url("/in"))
        await webhooks.add(rt, payer.account_id, event_type="cash_out", url=receiver.url("/out"))
        sent = await client.post(
            CASH_OUT, json=cash_out(to.pix_key, "RANDOM", external_id="wh-1"), headers=payer_headers
        )
        assert sent.status_code == 201
        assert await drain(rt) == 2
        bodies = {r.path: orjson.loads(r.body) for r in receiver.received}
        assert sorted(bodies) == ["/in", "/out"]
        assert bodies["/in"]["event"] == "CashIn"
        assert bodies["/out"]["event"] == "CashOut"
        [received] = await rows(rt, to.account_id)
        assert received["end_to_end_id"] in orjson.dumps(bodies["/in"]).decode()

    async def test_our_key_cannot_be_registered_in_the_sandbox_dict(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, receiver_headers, _, payer_headers = await parties(rt, client)
        for headers in (receiver_headers, payer_headers):
            response = await client.post(
                "/sandbox/dict/keys",
                json={
                    "key": receiver.pix_key.upper(),
                    "keyType": "EVP",
                    "name": "Outro Titular",
                    "document": PAYER_CPF,
                    "ispb": "60701190",
                    "bankName": "Banco Destino",
                    "branch": "0001",
                    "accountNumber": "1",
                },
                headers=headers,
            )
            assert response.status_code == 409, response.text
            assert "held by an account of this gateway" in response.json()["message"]
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM sandbox_dict_keys") == 0


class TestStaticQrCode:
    async def test_a_static_code_of_our_key_is_paid_in_the_house(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        receiver, _, payer, payer_headers = await parties(rt, client)
        code = encode(static(receiver.pix_key, "Loja Recebedora", "Recife", 700, "PED7"))
        response = await client.post(
            "/api/pix/cash-out-qrcode",
            json={"qrCode": code, "value": "7.00", "externalId": "qr-7"},
            headers=payer_headers,
        )
        assert response.status_code == 201, response.text
        assert response.json()["status"] == "CONFIRMED"
        [sent] = await rows(rt, payer.account_id)
        [received] = await rows(rt, receiver.account_id)
        assert (sent["kind"], sent["pix_key"]) == ("cash_out_qrcode", receiver.pix_key)
        assert received["pix_key"] == receiver.pix_key
        assert await balance(rt, receiver.account_id) == (700, 0)
        assert await balance(rt, payer.account_id) == (10000 - 700, 0)
        assert await drain(rt) == 0
        await ledger_verifies(rt)
