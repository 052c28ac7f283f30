"""The API Pix's webhooks by key through HTTP: PUT/GET/DELETE /webhook/{chave}, GET /webhook,
their scopes, problems and isolation, and the callback `POST {webhookUrl}/pix` with
`{"pix": [Pix]}` for a cob paid by the key, a PIX received by it, and a refund of one that
ends, through the outbox (signed, retried, logged, resent)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest

from pixgate.accounts.public import Scope, auth
from pixgate.accounts.service import keys
from pixgate.accounts.service.accounts import NewAccount
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from pixgate.webhooks import verify_signature
from tests.app.api_pix_document import assert_conforms
from tests.helpers import bearer, cert_header, make_account
from tests.support import drain
from tests.webhooks.conftest import make_due
from tests.webhooks.receiver import Receiver

BASE = Settings.model_fields["api_pix_base_path"].default
PROBLEM = "https://pix.bcb.gov.br/api/v2/error/"
PUBLIC = "93.184.215.14"  # a global unicast address: no DNS needed, nothing is sent to it
CPF = "52998224725"
TXID = "webhookPorChave" + "0" * 15
SHOP_CNPJ = "11222333000181"


async def scoped(rt: Runtime, account: NewAccount, *scopes: Scope) -> dict[str, str]:
    """Headers of a token that holds only `scopes` (the token route's form grants the same)."""
    certificate = cert_header(account.certificate_pem)
    token = await auth.issue_token(
        rt,
        auth.read_certificate(certificate),
        uuid.UUID(account.client_id),
        account.client_secret,
        scopes=frozenset(scopes),
    )
    return {"Authorization": f"Bearer {token.access_token}", "X-SSL-Client-Cert": certificate}


async def put(
    client: httpx.AsyncClient, headers: dict[str, str], chave: str, url: str
) -> httpx.Response:
    return await client.put(f"{BASE}/webhook/{chave}", headers=headers, json={"webhookUrl": url})


def assert_problem(response: httpx.Response, status: int, name: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["type"] == PROBLEM + name and body["status"] == status
    return body


class TestConfiguration:
    async def test_put_get_delete(self, insecure: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(insecure)
        headers = await bearer(client, account)
        chave = account.pix_key

        response = await put(client, headers, chave, "https://93.184.215.14/api/webhook/")
        assert response.status_code == 200, response.text
        assert_conforms(response, "PUT", "/webhook/{chave}")

        read = await client.get(f"{BASE}/webhook/{chave}", headers=headers)
        body = assert_conforms(read, "GET", "/webhook/{chave}")
        assert body["webhookUrl"] == "https://93.184.215.14/api/webhook/"
        assert body["chave"] == chave
        created = datetime.fromisoformat(body["criacao"])
        assert abs(created - datetime.now(UTC)) < timedelta(minutes=1)

        deleted = await client.delete(f"{BASE}/webhook/{chave}", headers=headers)
        assert deleted.status_code == 204 and deleted.content == b""
        assert_conforms(deleted, "DELETE", "/webhook/{chave}")
        gone = await client.get(f"{BASE}/webhook/{chave}", headers=headers)
        assert_problem(gone, 404, "NaoEncontrado")
        assert_conforms(gone, "GET", "/webhook/{chave}")
        again = await client.delete(f"{BASE}/webhook/{chave}", headers=headers)
        assert_problem(again, 404, "NaoEncontrado")
        assert_conforms(again, "DELETE", "/webhook/{chave}")

    async def test_put_again_replaces_the_url(
        self, insecure: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(insecure)
        headers = await bearer(client, account)
        await put(client, headers, account.pix_key, "https://93.184.215.14/a")
        response = await put(client, headers, account.pix_key, "https://93.184.215.15/b")
        assert response.status_code == 200, response.text
        read = await client.get(f"{BASE}/webhook/{account.pix_key}", headers=headers)
        assert read.json()["webhookUrl"] == "https://93.184.215.15/b"
        listed = await client.get(f"{BASE}/webhook", headers=headers)
        assert [w["webhookUrl"] for w in listed.json()["webhooks"]] == ["https://93.184.215.15/b"]

    async def test_any_spelling_of_the_key_names_it(
        self, insecure: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(insecure)
        headers = await bearer(client, account)
        upper = account.pix_key.upper()
        assert (await put(client, headers, upper, "https://93.184.215.14/h")).status_code == 200
        read = await client.get(f"{BASE}/webhook/{upper}", headers=headers)
        assert read.json()["chave"] == account.pix_key

    async def test_a_key_not_the_accounts_is_refused(
        self, insecure: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(insecure)
        other = await make_account(insecure)
        headers = await bearer(client, account)
        for chave in (other.pix_key, str(uuid.uuid4()), "loja@example.com"):
            response = await put(client, headers, chave, "https://93.184.215.14/hook")
            body = assert_problem(response, 400, "WebhookOperacaoInvalida")
            assert body["violacoes"] == [
                {"razao": "not a PIX key of this account", "propriedade": "webhook.chave"}
            ]
            assert_conforms(response, "PUT", "/webhook/{chave}")
        not_a_key = await put(client, headers, "not a key", "https://93.184.215.14/hook")
        assert (
            assert_problem(not_a_key, 400, "WebhookOperacaoInvalida")["violacoes"][0]["propriedade"]
            == "webhook.chave"
        )
        async with insecure.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM webhook_endpoints") == 0

    @pytest.mark.parametrize(
        ("url", "reason"),
        [
            ("http://pix.example.com/hook", "url must use HTTPS"),
            ("https://10.0.0.7/hook", "resolves to 10.0.0.7"),
            ("https://127.0.0.1/hook", "resolves to 127.0.0.1"),
            ("https://pix.example.com/a b", "must not contain spaces"),
            ("pix.example.com/hook", "url must use HTTPS"),
        ],
    )
    async def test_the_url_follows_the_destination_rules(
        self, rt: Runtime, client: httpx.AsyncClient, url: str, reason: str
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        response = await put(client, headers, account.pix_key, url)
        body = assert_problem(response, 400, "WebhookOperacaoInvalida")
        (violation,) = body["violacoes"]
        assert violation["propriedade"] == "webhook.webhookUrl"
        assert reason in violation["razao"]
        assert_conforms(response, "PUT", "/webhook/{chave}")

    async def test_a_body_without_webhook_url_is_refused(
        self, insecure: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(insecure)
        headers = await bearer(client, account)
        response = await client.put(
            f"{BASE}/webhook/{account.pix_key}",
            headers=headers,
            json={"url": "https://93.184.215.14/"},
        )
        body = assert_problem(response, 400, "WebhookOperacaoInvalida")
        assert body["violacoes"][0]["propriedade"] == "webhook.webhookUrl"


class TestScopes:
    async def test_writing_needs_webhook_write_and_reading_webhook_read(
        self, insecure: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(insecure)
        reader = await scoped(insecure, account, Scope.WEBHOOK_READ)
        writer = await scoped(insecure, account, Scope.WEBHOOK_WRITE)
        chave = account.pix_key

        refused = await put(client, reader, chave, "https://93.184.215.14/hook")
        assert_problem(refused, 403, "AcessoNegado")
        assert_conforms(refused, "PUT", "/webhook/{chave}")
        assert (await put(client, writer, chave, "https://93.184.215.14/h")).status_code == 200

        for path in (f"/webhook/{chave}", "/webhook"):
            assert_problem(await client.get(BASE + path, headers=writer), 403, "AcessoNegado")
            assert (await client.get(BASE + path, headers=reader)).status_code == 200
        deleting = await client.delete(f"{BASE}/webhook/{chave}", headers=reader)
        assert_problem(deleting, 403, "AcessoNegado")
        assert (await client.delete(f"{BASE}/webhook/{chave}", headers=writer)).status_code == 204

    async def test_no_token_is_acesso_negado(self, client: httpx.AsyncClient) -> None:
        response = await client.get(f"{BASE}/webhook")
        assert_problem(response, 403, "AcessoNegado")


class TestList:
    async def test_pages_and_window(self, insecure: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(insecure)
        headers = await bearer(client, account)
        chaves = [account.pix_key]
        for _ in range(2):
            chaves.append((await keys.add_random(insecure, account.account_id)).key)
        for n, chave in enumerate(chaves):
            assert (await put(client, headers, chave, f"https://93.184.215.14/h{n}")).is_success

        first = await client.get(
            f"{BASE}/webhook", headers=headers, params={"paginacao.itensPorPagina": 2}
        )
        body = assert_conforms(first, "GET", "/webhook")
        assert body["parametros"] == {
            "paginacao": {
                "paginaAtual": 0,
                "itensPorPagina": 2,
                "quantidadeDePaginas": 2,
                "quantidadeTotalDeItens": 3,
            }
        }
        assert [w["chave"] for w in body["webhooks"]] == chaves[:2]
        second = await client.get(
            f"{BASE}/webhook",
            headers=headers,
            params={"paginacao.itensPorPagina": 2, "paginacao.paginaAtual": 1},
        )
        assert [w["chave"] for w in assert_conforms(second, "GET", "/webhook")["webhooks"]] == [
            chaves[2]
        ]

        criacao = [w["criacao"] for w in body["webhooks"]]
        windowed = await client.get(
            f"{BASE}/webhook", headers=headers, params={"inicio": criacao[1], "fim": criacao[1]}
        )
        answer = assert_conforms(windowed, "GET", "/webhook")
        assert [w["chave"] for w in answer["webhooks"]] == [chaves[1]]
        assert answer["parametros"]["inicio"] == answer["parametros"]["fim"]
        assert answer["parametros"]["paginacao"]["quantidadeTotalDeItens"] == 1

    async def test_nothing_registered_is_one_empty_page(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await bearer(client, await make_account(rt))
        body = assert_conforms(
            await client.get(f"{BASE}/webhook", headers=headers), "GET", "/webhook"
        )
        assert body["webhooks"] == []
        assert body["parametros"]["paginacao"]["quantidadeDePaginas"] == 1

    @pytest.mark.parametrize(
        ("params", "field"),
        [
            ({"inicio": "2026-11-25T10:00:00Z", "fim": "2026-11-25T09:00:00Z"}, "fim"),
            ({"paginacao.paginaAtual": -1}, "paginacao.paginaAtual"),
            ({"paginacao.itensPorPagina": 0}, "paginacao.itensPorPagina"),
            ({"paginacao.itensPorPagina": 1001}, "paginacao.itensPorPagina"),
            ({"inicio": "yesterday"}, "inicio"),
        ],
    )
    async def test_a_bad_query_is_webhook_consulta_invalida(
        self, rt: Runtime, client: httpx.AsyncClient, params: dict[str, Any], field: str
    ) -> None:
        headers = await bearer(client, await make_account(rt))
        response = await client.get(f"{BASE}/webhook", headers=headers, params=params)
        body = assert_problem(response, 400, "WebhookConsultaInvalida")
        assert [v["propriedade"] for v in body["violacoes"]] == [field]
        assert_conforms(response, "GET", "/webhook")


class TestIsolation:
    async def test_another_accounts_webhook_is_not_there(
        self, insecure: Runtime, client: httpx.AsyncClient
    ) -> None:
        owner = await make_account(insecure)
        owner_headers = await bearer(client, owner)
        other_headers = await bearer(client, await make_account(insecure))
        chave = owner.pix_key
        assert (await put(client, owner_headers, chave, "https://93.184.215.14/o")).is_success

        assert_problem(
            await client.get(f"{BASE}/webhook/{chave}", headers=other_headers), 404, "NaoEncontrado"
        )
        assert_problem(
            await client.delete(f"{BASE}/webhook/{chave}", headers=other_headers),
            404,
            "NaoEncontrado",
        )
        listed = await client.get(f"{BASE}/webhook", headers=other_headers)
        assert listed.json()["webhooks"] == []
        taken = await put(client, other_headers, chave, "https://93.184.215.15/thief")
        assert_problem(taken, 400, "WebhookOperacaoInvalida")
        read = await client.get(f"{BASE}/webhook/{chave}", headers=owner_headers)
        assert read.json()["webhookUrl"] == "https://93.184.215.14/o"

    async def test_the_public_familys_webhook_list_does_not_show_it(
        self, api_on: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(api_on)
        headers = await bearer(client, account)
        assert (await put(client, headers, account.pix_key, "https://93.184.215.14/o")).is_success
        listed = await client.get("/api/webhooks", headers=headers)
        assert listed.json()["webhooks"] == []


# --- the callback ---------------------------------------------------------------------------


async def paid_cob(client: httpx.AsyncClient, headers: dict[str, str], chave: str) -> None:
    """A cob of the key, paid from outside."""
    cob = await client.put(
        f"/cob/{TXID}",
        headers=headers,
        json={"calendario": {"expiracao": 3600}, "valor": {"original": "50.00"}, "chave": chave},
    )
    assert cob.status_code == 201, cob.text
    paid = await client.post(
        "/sandbox/pix/pay",
        headers=headers,
        json={
            "pixCode": cob.json()["pixCopiaECola"],
            "payer": {"name": "Pagador", "document": CPF},
        },
    )
    assert paid.status_code in (200, 201), paid.text


def pix_of(body: bytes) -> list[dict[str, Any]]:
    parsed = orjson.loads(body)
    assert set(parsed) == {"pix"}
    pix: list[dict[str, Any]] = parsed["pix"]
    for item in pix:
        assert_conforms(httpx.Response(200, json=item), "GET", "/pix/{e2eid}")
    return pix


async def as_get_answers(
    client: httpx.AsyncClient, headers: dict[str, str], e2eid: str
) -> dict[str, Any]:
    response = await client.get(f"{BASE}/pix/{e2eid}", headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


class TestCallback:
    async def test_a_cob_paid_then_its_devolucao_settled(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        headers = await bearer(client, account)
        assert (await put(client, headers, account.pix_key, receiver.url("/hook"))).is_success
        secret = await webhooks.reveal_secret(rt, account.account_id)

        await paid_cob(client, headers, account.pix_key)
        await drain(rt)
        (first,) = receiver.at("/hook/pix")
        assert verify_signature(secret, first.headers, first.body)
        assert first.headers["webhook-id"].startswith("msg_")
        (pix,) = pix_of(first.body)
        assert pix["txid"] == TXID and pix["valor"] == "50.00"
        assert pix["chave"] == account.pix_key and "devolucoes" not in pix
        assert pix == await as_get_answers(client, headers, pix["endToEndId"])

        refund = await client.put(
            f"/pix/{pix['endToEndId']}/devolucao/dev1", headers=headers, json={"valor": "20.00"}
        )
        assert refund.status_code == 201, refund.text
        await drain(rt)
        first_again, second = receiver.at("/hook/pix")
        assert first_again is first
        assert verify_signature(secret, second.headers, second.body)
        assert second.headers["webhook-id"] != first.headers["webhook-id"]
        (refunded,) = pix_of(second.body)
        assert refunded["endToEndId"] == pix["endToEndId"]
        (devolucao,) = refunded["devolucoes"]
        assert (devolucao["id"], devolucao["valor"], devolucao["status"]) == (
            "dev1",
            "20.00",
            "DEVOLVIDO",
        )
        assert refunded == await as_get_answers(client, headers, pix["endToEndId"])

    async def test_a_cob_naming_the_key_in_another_spelling_is_told(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        headers = await bearer(client, account)
        assert (await put(client, headers, account.pix_key, receiver.url("/hook"))).is_success
        await paid_cob(client, headers, account.pix_key.upper())
        await drain(rt)
        (told,) = receiver.at("/hook/pix")
        assert pix_of(told.body)[0]["chave"] == account.pix_key

    async def test_only_the_keys_own_pix_are_told(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        headers = await bearer(client, account)
        other_key = (await keys.add_random(rt, account.account_id)).key
        assert (await put(client, headers, other_key, receiver.url("/hook"))).is_success

        for chave in (account.pix_key, other_key):
            response = await client.post(
                "/sandbox/pix/incoming",
                headers=headers,
                json={"value": "3.00", "payer": {"name": "P", "document": CPF}, "chave": chave},
            )
            assert response.status_code == 201, response.text
        await drain(rt)
        (only,) = receiver.at("/hook/pix")
        (pix,) = pix_of(only.body)
        assert pix["chave"] == other_key and pix["valor"] == "3.00"
        assert "txid" not in pix

    async def test_failures_are_retried_logged_and_resent(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        headers = await bearer(client, account)
        assert (await put(client, headers, account.pix_key, receiver.url("/hook"))).is_success
        receiver.plan("/hook/pix", 500)

        await paid_cob(client, headers, account.pix_key)
        await drain(rt)
        failed = receiver.at("/hook/pix")
        assert len(failed) == 1
        found = await webhooks.delivery_log(rt, account.account_id)
        (entry,) = [e for e in found.events if e.deliveries]
        (delivery,) = entry.deliveries
        assert delivery.url == receiver.url("/hook/pix") and delivery.version == "api_pix"
        assert delivery.status == "pending" and delivery.next_attempt_at is not None
        assert [a.status_code for a in delivery.attempts] == [500]

        await make_due(rt)
        await drain(rt)
        retried = receiver.at("/hook/pix")[1]
        assert retried.headers["webhook-id"] == failed[0].headers["webhook-id"]
        assert pix_of(retried.body) == pix_of(failed[0].body)

        resent = await client.post(f"/api/resend-webhook/{entry.event.public_id}", headers=headers)
        assert resent.status_code == 200, resent.text
        assert resent.json()["statusCode"] == 200
        third = receiver.at("/hook/pix")[2]
        assert third.headers["webhook-id"] == failed[0].headers["webhook-id"]
        assert pix_of(third.body) == pix_of(failed[0].body)
        log = await webhooks.delivery_log(rt, account.account_id)
        (logged,) = [d for e in log.events for d in e.deliveries]
        assert [(a.trigger, a.status_code) for a in logged.attempts] == [
            ("delivery", 500),
            ("delivery", 200),
            ("resend", 200),
        ]

    async def test_a_cancelled_webhook_is_told_nothing_more(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        headers = await bearer(client, account)
        assert (await put(client, headers, account.pix_key, receiver.url("/hook"))).is_success
        receiver.plan("/hook/pix", 503)
        await paid_cob(client, headers, account.pix_key)
        await drain(rt)
        assert len(receiver.at("/hook/pix")) == 1

        deleted = await client.delete(f"{BASE}/webhook/{account.pix_key}", headers=headers)
        assert deleted.status_code == 204
        await make_due(rt)
        await drain(rt)
        assert len(receiver.at("/hook/pix")) == 1
        async with rt.db.connection() as conn:
            statuses = await conn.fetch("SELECT status FROM webhook_deliveries")
        assert [r["status"] for r in statuses] == ["failed"]

    async def test_a_payment_from_another_of_our_accounts_is_told(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt = insecure
        shop = await make_account(rt, name="Loja Recebedora", document=SHOP_CNPJ)
        shop_headers = await bearer(client, shop)
        payer_headers = await bearer(client, await make_account(rt, balance="50.00"))
        assert (await put(client, shop_headers, shop.pix_key, receiver.url("/hook"))).is_success

        paid = await client.post(
            "/api/pix/cash-out",
            headers=payer_headers,
            json={
                "value": "7.50",
                "externalId": "in-house-1",
                "details": {
                    "key": shop.pix_key,
                    "keyType": "RANDOM",
                    "name": "Loja Recebedora",
                    "document": SHOP_CNPJ,
                },
            },
        )
        assert paid.status_code == 201, paid.text
        await drain(rt)
        (told,) = receiver.at("/hook/pix")
        (pix,) = pix_of(told.body)
        assert (pix["chave"], pix["valor"]) == (shop.pix_key, "7.50")
        assert pix == await as_get_answers(client, shop_headers, pix["endToEndId"])

    async def test_a_refused_devolucao_is_told_nao_realizado(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        headers = await bearer(client, account)
        assert (await put(client, headers, account.pix_key, receiver.url("/hook"))).is_success
        received = await client.post(
            "/sandbox/pix/incoming",
            headers=headers,
            json={"value": "30.00", "payer": {"name": "P", "document": CPF}},
        )
        assert received.status_code == 201, received.text
        e2e = received.json()["endToEndId"]
        await drain(rt)
        refused = await client.put(
            f"/pix/{e2e}/devolucao/falha1",
            headers={**headers, "X-Sandbox-Scenario": "ORDER_REJECTED"},
            json={"valor": "5.00"},
        )
        assert refused.status_code == 201, refused.text
        await drain(rt)
        first, second = receiver.at("/hook/pix")
        assert "devolucoes" not in pix_of(first.body)[0]
        (pix,) = pix_of(second.body)
        (devolucao,) = pix["devolucoes"]
        assert (devolucao["id"], devolucao["status"]) == ("falha1", "NAO_REALIZADO")
        assert devolucao["motivo"]
