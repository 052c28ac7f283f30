"""PUT, GET and PATCH /cob/{txid} and the charge location (JWS)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import jwt
import pytest

from pixgate.core.pix import brcode
from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account
from tests.support import FixedClock, drain

TXID = "a" * 10 + "B" * 10 + "1234567890"  # 30 characters
CPF = "52998224725"


def cob_body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "calendario": {"expiracao": 3600},
        "devedor": {"cpf": CPF, "nome": "Fulano de Tal"},
        "valor": {"original": "123.45"},
        "chave": "loja@example.com",
        "solicitacaoPagador": "Pedido 42",
        "infoAdicionais": [{"nome": "Campo", "valor": "Valor"}],
    }
    body.update(changes)
    return body


async def setup(rt: Runtime, client: httpx.AsyncClient) -> dict[str, str]:
    return await bearer(client, await make_account(rt, name="Padaria São João"))


async def pay(client: httpx.AsyncClient, headers: dict[str, str], code: str) -> httpx.Response:
    return await client.post(
        "/sandbox/pix/pay",
        headers=headers,
        json={"pixCode": code, "payer": {"name": "Pagador", "document": CPF}},
    )


class TestCreate:
    async def test_created_active_with_echoes_and_code(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        response = await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())
        assert response.status_code == 201, response.text
        cob = response.json()
        assert cob["txid"] == TXID
        assert cob["revisao"] == 0
        assert cob["status"] == "ATIVA"
        assert cob["calendario"]["expiracao"] == 3600
        assert cob["calendario"]["criacao"].endswith("Z")
        assert cob["loc"]["tipoCob"] == "cob" and isinstance(cob["loc"]["id"], int)
        assert cob["location"] == cob["loc"]["location"] == cob["pixCopiaECola"]
        assert cob["valor"] == {"original": "123.45", "modalidadeAlteracao": 0}
        assert cob["devedor"] == {"cpf": CPF, "nome": "Fulano de Tal"}
        assert cob["chave"] == "loja@example.com"
        assert cob["solicitacaoPagador"] == "Pedido 42"
        assert cob["infoAdicionais"] == [{"nome": "Campo", "valor": "Valor"}]
        code = brcode.decode(cob["location"])
        assert code.amount_cents == 12345
        assert code.merchant_name == "Padaria Sao Joao"
        assert code.location_url is not None and "/qr/v2/" in code.location_url
        assert "://" not in code.location_url

    async def test_alphanumeric_cnpj_devedor(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        headers = await setup(rt, client)
        body = cob_body(devedor={"cnpj": "12ABC34501DE35", "nome": "Empresa"})
        response = await client.put(f"/cob/{TXID}", headers=headers, json=body)
        assert response.status_code == 201, response.text

    async def test_reused_txid_is_409(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        headers = await setup(rt, client)
        assert (
            await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())
        ).status_code == 201
        again = await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())
        assert again.status_code == 409
        assert set(again.json()) == {"statusCode", "message", "error"}

    @pytest.mark.parametrize(
        ("txid", "body"),
        [
            ("short123", cob_body()),
            ("a" * 36, cob_body()),
            ("a" * 25 + "-" + "b" * 4, cob_body()),
            (TXID, cob_body(devedor={"cpf": "12345678900", "nome": "X"})),
            (TXID, cob_body(devedor={"cnpj": "11222333000180", "nome": "X"})),
            (TXID, cob_body(devedor={"cpf": CPF})),
            (TXID, cob_body(valor={"original": "10"})),
            (TXID, cob_body(valor={"original": "10.001"})),
            (TXID, cob_body(valor={"original": "0.00"})),
            (TXID, cob_body(chave="x" * 78)),
            (TXID, cob_body(solicitacaoPagador="x" * 141)),
            (TXID, {k: v for k, v in cob_body().items() if k != "calendario"}),
        ],
    )
    async def test_bad_input_is_400_and_creates_nothing(
        self, rt: Runtime, client: httpx.AsyncClient, txid: str, body: dict[str, Any]
    ) -> None:
        headers = await setup(rt, client)
        response = await client.put(f"/cob/{txid}", headers=headers, json=body)
        assert response.status_code == 400, response.text
        assert set(response.json()) == {"statusCode", "message", "error"}
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM charges") == 0
            assert await conn.fetchval("SELECT count(*) FROM transactions") == 0


class TestReadAndRevise:
    async def test_get_and_another_accounts_404(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        created = (await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())).json()
        read = await client.get(f"/cob/{TXID}", headers=headers)
        assert read.status_code == 200
        assert read.json() == created
        other = await bearer(client, await make_account(rt, name="Outra"))
        assert (await client.get(f"/cob/{TXID}", headers=other)).status_code == 404
        patched = await client.patch(
            f"/cob/{TXID}", headers=other, json={"solicitacaoPagador": "x"}
        )
        assert patched.status_code == 404
        assert (await client.get(f"/cob/{'z' * 30}", headers=headers)).status_code == 404

    async def test_patch_revises_and_regenerates_the_code(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        created = (await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())).json()
        revised = await client.patch(
            f"/cob/{TXID}",
            headers=headers,
            json={"valor": {"original": "200.00"}, "solicitacaoPagador": "Pedido 43"},
        )
        assert revised.status_code == 200, revised.text
        body = revised.json()
        assert body["revisao"] == 1
        assert body["valor"]["original"] == "200.00"
        assert body["solicitacaoPagador"] == "Pedido 43"
        assert body["devedor"] == created["devedor"]
        assert body["location"] != created["location"]
        assert (
            brcode.decode(body["location"]).location_url
            == brcode.decode(created["location"]).location_url
        )
        again = await client.patch(
            f"/cob/{TXID}", headers=headers, json={"calendario": {"expiracao": 7200}}
        )
        assert again.json()["revisao"] == 2
        assert again.json()["calendario"]["expiracao"] == 7200

    async def test_cancel_then_no_change_and_no_payment(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        created = (await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())).json()
        cancelled = await client.patch(
            f"/cob/{TXID}", headers=headers, json={"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
        )
        assert cancelled.json()["status"] == "REMOVIDA_PELO_USUARIO_RECEBEDOR"
        refused = await client.patch(
            f"/cob/{TXID}", headers=headers, json={"solicitacaoPagador": "x"}
        )
        assert refused.status_code == 400
        payment = await pay(client, headers, created["location"])
        assert payment.status_code == 409
        assert (await client.get("/accounts/balances", headers=headers)).json()["data"][0][
            "balanceAmount"
        ]["available"] == 0


class TestPaymentAndExpiry:
    async def test_paid_cob_is_concluida_with_pix_list(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        created = (await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())).json()
        paid = await pay(client, headers, created["location"])
        assert paid.status_code == 201, paid.text
        read = (await client.get(f"/cob/{TXID}", headers=headers)).json()
        assert read["status"] == "CONCLUIDA"
        assert read["pix"][0]["endToEndId"] == paid.json()["endToEndId"]
        assert read["pix"][0]["valor"] == "123.45"
        assert read["pix"][0]["txid"] == TXID

    async def test_cob_expiring_unread(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        headers = await setup(rt, client)
        created = (
            await client.put(
                f"/cob/{TXID}", headers=headers, json=cob_body(calendario={"expiracao": 120})
            )
        ).json()
        clock = FixedClock(rt.clock.now())
        rt.clock = clock
        clock.advance(seconds=121)
        async with rt.db.connection() as conn:
            await conn.execute("UPDATE jobs SET run_at = now() WHERE kind = 'charges.expire'")
        assert await drain(rt) >= 1
        async with rt.db.connection() as conn:
            stored = await conn.fetchrow("SELECT status FROM charges WHERE txid = $1", TXID)
            payment = await conn.fetchrow(
                "SELECT status, error_code FROM transactions WHERE kind = 'cob'"
            )
        assert stored["status"] == "REMOVIDA_PELO_PSP"
        assert (payment["status"], payment["error_code"]) == ("ERROR", "PAYMENT_EXPIRED")
        read = (await client.get(f"/cob/{TXID}", headers=headers)).json()
        assert read["status"] == "REMOVIDA_PELO_PSP"
        assert (await pay(client, headers, created["location"])).status_code == 409

    async def test_expired_reads_as_removed_before_the_job_runs(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        await client.put(
            f"/cob/{TXID}", headers=headers, json=cob_body(calendario={"expiracao": 120})
        )
        rt.clock = FixedClock(rt.clock.now() + timedelta(seconds=200))
        read = (await client.get(f"/cob/{TXID}", headers=headers)).json()
        assert read["status"] == "REMOVIDA_PELO_PSP"


class TestLocation:
    async def _location_token(self, code: str) -> str:
        url = brcode.decode(code).location_url
        assert url is not None
        return url.rsplit("/", 1)[-1]

    async def test_jws_verified_with_the_published_key(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        created = (await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())).json()
        token = await self._location_token(created["location"])
        response = await client.get(f"/qr/v2/{token}")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/jose")
        header = jwt.get_unverified_header(response.text)
        assert header["alg"] in ("PS256", "RS256")
        assert header["jku"].endswith("/.well-known/pix-jwks.json")
        jwks = (await client.get("/.well-known/pix-jwks.json")).json()
        key = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
        payload = jwt.decode(response.text, jwt.PyJWK(key).key, algorithms=["PS256"])
        assert payload["txid"] == TXID
        assert payload["revisao"] == 0
        assert payload["status"] == "ATIVA"
        assert payload["valor"] == {"original": "123.45", "modalidadeAlteracao": 0}
        assert payload["chave"] == "loja@example.com"
        assert payload["calendario"]["expiracao"] == 3600
        assert {"criacao", "apresentacao"} <= set(payload["calendario"])
        legacy = await client.get(f"/loc/{token}")  # where codes issued before pointed
        assert legacy.status_code == 200
        assert legacy.headers["content-type"].startswith("application/jose")
        legacy_payload = jwt.decode(legacy.text, jwt.PyJWK(key).key, algorithms=["PS256"])
        assert {k: v for k, v in legacy_payload.items() if k != "calendario"} == {
            k: v for k, v in payload.items() if k != "calendario"
        }

    async def test_unknown_is_404_and_paid_is_410(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        assert (await client.get("/loc/nothing-here")).status_code == 404
        created = (await client.put(f"/cob/{TXID}", headers=headers, json=cob_body())).json()
        await pay(client, headers, created["location"])
        token = await self._location_token(created["location"])
        assert (await client.get(f"/loc/{token}")).status_code == 410

    async def test_cash_in_charges_have_locations(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        headers = await setup(rt, client)
        created = await client.post(
            "/api/pix/cash-in",
            headers=headers,
            json={
                "transaction": {"value": 15, "description": "Pedido", "externalId": "ci-1"},
                "payer": {"fullName": "Fulano", "document": CPF},
            },
        )
        assert created.status_code == 201, created.text
        token = await self._location_token(created.json()["pixCode"])
        response = await client.get(f"/qr/v2/{token}")
        assert response.status_code == 200
        assert jwt.decode(response.text, options={"verify_signature": False})["valor"] == {
            "original": "15.00",
            "modalidadeAlteracao": 0,
        }
