"""PUT and GET /pix/{e2eid}/devolucao/{id}, the refundable balance both
families share, and the refund_in webhooks (v1 and v2 REFUND), on real PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import orjson

from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from tests.helpers import SIMPLE_BODY, bearer, make_account
from tests.refunds.helpers import (
    account_with_pix,
    balance,
    count_rows,
    devolucao,
    listed,
    paid_by_our_account,
    receive,
    refund_in,
    send,
)
from tests.support import FixedClock, drain
from tests.webhooks.receiver import Receiver


def assert_simple(response: httpx.Response, status: int) -> None:
    assert response.status_code == status, response.text
    assert set(response.json()) == SIMPLE_BODY, response.text


class TestPutAndGet:
    async def test_em_processamento_then_devolvido(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers, pix = await account_with_pix(rt, client)
        e2e = pix["endToEndId"]
        response = await devolucao(client, headers, e2e, "dev1", "7.89", descricao="Pedido 981")
        assert response.status_code == 201, response.text
        body = response.json()
        assert set(body) == {"id", "rtrId", "valor", "natureza", "descricao", "horario", "status"}
        assert (body["id"], body["valor"], body["natureza"], body["status"]) == (
            "dev1",
            "7.89",
            "ORIGINAL",
            "EM_PROCESSAMENTO",
        )
        assert body["descricao"] == "Pedido 981"
        assert body["rtrId"].startswith("D" + rt.settings.ispb) and len(body["rtrId"]) == 32
        assert set(body["horario"]) == {"solicitacao"}
        assert await balance(rt, account_id) == (10000 - 789, 789)

        await drain(rt)
        read = await client.get(f"/pix/{e2e}/devolucao/dev1", headers=headers)
        assert read.status_code == 200, read.text
        settled = read.json()
        assert settled["status"] == "DEVOLVIDO" and settled["rtrId"] == body["rtrId"]
        assert settled["horario"]["solicitacao"] == body["horario"]["solicitacao"]
        assert settled["horario"]["liquidacao"].endswith("Z")
        assert "motivo" not in settled
        assert await balance(rt, account_id) == (10000 - 789, 0)

    async def test_nao_realizado_with_motivo_and_the_hold_voided(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers, pix = await account_with_pix(rt, client)
        e2e = pix["endToEndId"]
        response = await devolucao(
            client, headers, e2e, "falha1", "20.00", natureza="RETIRADA", scenario="ORDER_REJECTED"
        )
        assert response.status_code == 201, response.text
        await drain(rt)
        body = (await client.get(f"/pix/{e2e}/devolucao/falha1", headers=headers)).json()
        assert (body["status"], body["natureza"]) == ("NAO_REALIZADO", "RETIRADA")
        assert body["motivo"] and "liquidacao" not in body["horario"]
        assert await balance(rt, account_id) == (10000, 0)

    async def test_a_repeated_put_answers_the_same_refund_and_creates_nothing(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers, pix = await account_with_pix(rt, client)
        first = await devolucao(client, headers, pix["endToEndId"], "rep1", "10.00")
        assert first.status_code == 201, first.text
        again = await devolucao(client, headers, pix["endToEndId"], "rep1", "10.00")
        assert again.status_code == 201, again.text
        assert again.json() == first.json()
        assert again.headers["idempotent-replayed"] == "true"
        assert "idempotent-replayed" not in first.headers
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 1
        assert await balance(rt, account_id) == (9000, 1000)
        await drain(rt)
        settled = await devolucao(client, headers, pix["endToEndId"], "rep1", "10.00")
        assert settled.status_code == 201 and settled.json()["status"] == "DEVOLVIDO"

    async def test_a_repeat_with_another_valor_is_400_and_changes_nothing(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers, pix = await account_with_pix(rt, client)
        other = await receive(client, headers, "50.00")
        assert (
            await devolucao(client, headers, pix["endToEndId"], "r1", "5.00")
        ).status_code == 201
        for e2e, valor, extra in (
            (pix["endToEndId"], "6.00", {}),
            (pix["endToEndId"], "5.00", {"natureza": "RETIRADA"}),
            (pix["endToEndId"], "5.00", {"descricao": "outra"}),
            (other["endToEndId"], "5.00", {}),  # the id names a refund of another PIX
        ):
            assert_simple(await devolucao(client, headers, e2e, "r1", valor, **extra), 400)
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 1
        assert await balance(rt, account_id) == (15000 - 500, 500)


class TestSharedRefundableBalance:
    async def test_refund_in_then_devolucao_over_the_remainder(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers, pix = await account_with_pix(rt, client)
        made = await refund_in(client, headers, pix["transactionId"], 60, externalId="pub1")
        assert made.status_code == 201, made.text
        assert_simple(await devolucao(client, headers, pix["endToEndId"], "bc1", "40.01"), 400)
        # the refund-in is the devolucao `pub1` of the same PIX
        seen = await client.get(f"/pix/{pix['endToEndId']}/devolucao/pub1", headers=headers)
        assert seen.status_code == 200, seen.text
        assert (seen.json()["valor"], seen.json()["status"]) == ("60.00", "EM_PROCESSAMENTO")
        assert (
            await devolucao(client, headers, pix["endToEndId"], "bc1", "40.00")
        ).status_code == 201

    async def test_devolucao_then_refund_in_over_the_remainder(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers, pix = await account_with_pix(rt, client)
        made = await devolucao(client, headers, pix["endToEndId"], "bc2", "70.00")
        assert made.status_code == 201, made.text
        over = await refund_in(client, headers, pix["transactionId"], "30.01")
        assert over.status_code == 400 and over.json()["code"] == "REFUND_AMOUNT_EXCEEDED"
        assert (await refund_in(client, headers, pix["transactionId"], "30")).status_code == 201
        await drain(rt)
        item = await listed(client, headers, (await _refund_uuid(rt, "bc2")))
        assert (item["externalId"], item["operationType"], item["movementType"]) == (
            "bc2",
            "Refund in",
            "DEBIT",
        )


async def _refund_uuid(rt: Runtime, external_id: str) -> str:
    async with rt.db.connection() as conn:
        return str(
            await conn.fetchval(
                "SELECT transaction_id FROM transactions WHERE external_id = $1", external_id
            )
        )


class TestRefused:
    async def test_formats_are_400(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        _, headers, pix = await account_with_pix(rt, client)
        e2e = pix["endToEndId"]
        for path_e2e, refund_id, valor, extra in (
            (e2e[:31], "a1", "1.00", {}),
            (e2e[:31] + "-", "a1", "1.00", {}),
            (e2e, "a" * 36, "1.00", {}),
            (e2e, "com-hifen", "1.00", {}),
            (e2e, "a1", "1.0", {}),
            (e2e, "a1", "1", {}),
            (e2e, "a1", "0.00", {}),
            (e2e, "a1", "1.00", {"natureza": "MED_FRAUDE"}),
            (e2e, "a1", "1.00", {"natureza": "MED_OPERACIONAL"}),
            (e2e, "a1", "1.00", {"descricao": "d" * 141}),
        ):
            response = await devolucao(client, headers, path_e2e, refund_id, valor, **extra)
            assert_simple(response, 400)
        assert_simple(await devolucao(client, headers, e2e, "a1", "100.01"), 400)
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 0

    async def test_not_a_receipt_of_the_account_is_404(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50.00")
        headers = await bearer(client, account)
        other = await make_account(rt, name="Outra Loja")
        theirs = await receive(client, await bearer(client, other), "10.00")
        sent = await send(rt, client, headers, "5.00")
        async with rt.db.connection() as conn:
            sent_e2e = await conn.fetchval(
                "SELECT end_to_end_id FROM transactions WHERE transaction_id = $1::uuid",
                sent["transactionId"],
            )
        unknown = "E12345678202611241000abcdefghijk"
        for e2e in (unknown, theirs["endToEndId"], sent_e2e):
            assert_simple(await devolucao(client, headers, e2e, "n1", "1.00"), 404)
            assert_simple(await client.get(f"/pix/{e2e}/devolucao/n1", headers=headers), 404)
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 0

    async def test_deadline_is_422(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        now = datetime.now(UTC).replace(microsecond=0)
        rt.clock = FixedClock(now)
        account = await make_account(rt)
        headers = await bearer(client, account)
        late = await receive(client, headers, "10.00", paid_at=now - timedelta(days=90))
        assert_simple(await devolucao(client, headers, late["endToEndId"], "t1", "1.00"), 422)
        in_time = await receive(client, headers, "10.00", paid_at=now - timedelta(days=89))
        ok = await devolucao(client, headers, in_time["endToEndId"], "t2", "1.00")
        assert ok.status_code == 201, ok.text

    async def test_short_balance_is_422(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account_id, headers, pix = await account_with_pix(rt, client, "10.00")
        await send(rt, client, headers, "9.00")
        assert_simple(await devolucao(client, headers, pix["endToEndId"], "s1", "2.00"), 422)
        assert await balance(rt, account_id) == (100, 0)


async def test_refund_in_webhooks_v1_and_v2(
    rt: Runtime, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    account_id, headers, pix = await account_with_pix(rt, client)
    await webhooks.add(rt, account_id, event_type="refund_in", url=receiver.url("/v1"))
    await webhooks.add(
        rt, account_id, event_type="refund_in", url=receiver.url("/v2"), version="v2"
    )
    made = await refund_in(client, headers, pix["transactionId"], "12.34", reason="Troca")
    assert made.status_code == 201, made.text
    await drain(rt)
    v1 = orjson.loads(receiver.at("/v1")[0].body)
    v2 = orjson.loads(receiver.at("/v2")[0].body)
    async with rt.db.connection() as conn:
        rtr = await conn.fetchval(
            "SELECT end_to_end_id FROM transactions WHERE transaction_id = $1::uuid",
            made.json()["transactionId"],
        )
    assert (v1["event"], v1["status"], v1["movementType"]) == ("RefundIn", "CONFIRMED", "DEBIT")
    assert v1["transactionId"] == made.json()["transactionId"]
    assert v1["externalId"] == made.json()["externalId"]
    assert (v1["endToEndId"], v1["originalAmount"], v1["finalAmount"]) == (rtr, 12.34, 12.34)
    assert v1["metadata"]["providerTransactionId"] == made.json()["providerTransactionId"]
    assert v2["type"] == "REFUND"
    data = v2["data"]
    assert (data["status"], data["endToEndId"], data["creditDebitType"]) == (
        "REFUNDED",
        pix["endToEndId"],
        "DEBIT",
    )
    assert data["payment"] == {"amount": "100.00", "currency": "BRL"}
    (refund,) = data["refunds"]
    assert (refund["status"], refund["endToEndId"], refund["information"]) == (
        "LIQUIDATED",
        rtr,
        "Troca",
    )
    assert refund["payment"] == {"amount": 12.34, "currency": "BRL"}


async def test_a_pix_our_account_paid_is_returned_in_the_house(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    """The payer of an internal PIX is credited when the devolucao settles; a repeated PUT
    answers the same refund and credits nothing more."""
    pix = await paid_by_our_account(rt, client, "40.00")
    headers = pix.receiver_headers
    made = await devolucao(client, headers, pix.end_to_end_id, "casa1", "12.00")
    assert made.status_code == 201, made.text
    assert made.json()["status"] == "EM_PROCESSAMENTO"
    await drain(rt)
    replay = await devolucao(client, headers, pix.end_to_end_id, "casa1", "12.00")
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    await drain(rt)
    read = await client.get(f"/pix/{pix.end_to_end_id}/devolucao/casa1", headers=headers)
    assert read.status_code == 200, read.text
    assert read.json()["status"] == "DEVOLVIDO" and read.json()["horario"]["liquidacao"]
    assert await balance(rt, pix.receiver_id) == (2800, 0)
    assert await balance(rt, pix.payer_id) == (7200, 0)
    async with rt.db.connection() as conn:
        credit = await conn.fetchrow(
            "SELECT * FROM transactions WHERE operation = 'REFUND_OUT' AND account_id = $1",
            pix.payer_id,
        )
    assert credit is not None
    assert credit["amount"] == 1200 and credit["end_to_end_id"] == read.json()["rtrId"]
