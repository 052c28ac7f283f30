"""The API Pix's payload locations through HTTP, under its base path: POST and GET /loc,
GET /loc/{id}, DELETE /loc/{id}/txid and GET /loc/{id}/qrcode, checked against the document
(PayloadLocation, PayloadLocationCompleta, PayloadLocationConsultadas, its problems) and
their scopes; and the public payload at /qr/v2/{token} (the document's
GET /{pixUrlAccessToken}) that follows the location from one cob to the next."""

from __future__ import annotations

import base64
import re
from typing import Any

import httpx
import pytest

from pixgate.accounts.public import Scope
from pixgate.core.pix import brcode
from pixgate.runtime import Runtime
from tests.app.api_pix_document import assert_conforms, jws_claims
from tests.charges.api_pix_helpers import (
    BASE,
    CPF,
    Receiver,
    assert_problem,
    cob_body,
    location_of,
    new_txid,
    payload_at,
    receiver,
    scoped,
    token_of,
    window,
)

PAYLOAD = "/{pixUrlAccessToken}"


async def new_location(
    client: httpx.AsyncClient, who: Receiver, tipo_cob: str = "cob"
) -> dict[str, Any]:
    response = await client.post(f"{BASE}/loc", headers=who.headers, json={"tipoCob": tipo_cob})
    body: dict[str, Any] = assert_conforms(response, "POST", "/loc")
    assert response.status_code == 201
    return body


async def cob_at(
    client: httpx.AsyncClient, who: Receiver, loc_id: int | None = None, **changes: Any
) -> dict[str, Any]:
    if loc_id is not None:
        changes["loc"] = {"id": loc_id}
    response = await client.put(
        f"{BASE}/cob/{new_txid()}", headers=who.headers, json=cob_body(who.key, **changes)
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


class TestCreateAndRead:
    async def test_post_creates_a_free_location(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        response = await client.post(f"{BASE}/loc", headers=who.headers, json={"tipoCob": "cob"})
        created = assert_conforms(response, "POST", "/loc")
        assert response.status_code == 201
        assert created["tipoCob"] == "cob" and "txid" not in created
        host = rt.settings.public_url.split("://", 1)[1]
        assert re.fullmatch(re.escape(host) + r"/qr/v2/[0-9a-f]{32}", created["location"])
        assert created["criacao"].endswith("Z")
        expected = f"{rt.settings.public_url}{BASE}/loc/{created['id']}"
        assert response.headers["location"] == expected
        read = await client.get(f"{BASE}/loc/{created['id']}", headers=who.headers)
        assert assert_conforms(read, "GET", "/loc/{id}") == created
        nothing = await client.get(f"/qr/v2/{token_of(created['location'])}")
        assert_conforms(nothing, "GET", PAYLOAD)
        assert_problem(nothing, 404, "CobPayloadNaoEncontrado")

    async def test_a_cobv_location_can_be_made(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        assert (await new_location(client, who, "cobv"))["tipoCob"] == "cobv"

    @pytest.mark.parametrize("body", [{"tipoCob": "boleto"}, {}, {"tipoCob": 1}])
    async def test_a_tipo_cob_the_schema_refuses(
        self, rt: Runtime, client: httpx.AsyncClient, body: dict[str, Any]
    ) -> None:
        who = await receiver(rt, client)
        response = await client.post(f"{BASE}/loc", headers=who.headers, json=body)
        assert_conforms(response, "POST", "/loc")
        problem = assert_problem(response, 400, "PayloadLocationOperacaoInvalida")
        assert problem["violacoes"][0]["propriedade"] == "loc.tipoCob"
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM locations") == 0

    @pytest.mark.parametrize("which", ["another account's", "unknown", "not a number"])
    async def test_a_location_not_ours_is_not_found(
        self, rt: Runtime, client: httpx.AsyncClient, which: str
    ) -> None:
        who = await receiver(rt, client)
        other = await receiver(rt, client, name="Outra")
        theirs = await new_location(client, other)
        loc_id = {
            "another account's": str(theirs["id"]),
            "unknown": str(theirs["id"] + 1000),
            "not a number": "abc",
        }[which]
        for method, path in [
            ("GET", f"/loc/{loc_id}"),
            ("DELETE", f"/loc/{loc_id}/txid"),
            ("GET", f"/loc/{loc_id}/qrcode"),
        ]:
            response = await client.request(method, BASE + path, headers=who.headers)
            assert_problem(response, 404, "NaoEncontrado")
        read = await client.get(f"{BASE}/loc/{loc_id}", headers=who.headers)
        assert_conforms(read, "GET", "/loc/{id}")

    async def test_a_cobs_location_names_its_txid(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        cob = await cob_at(client, who)
        response = await client.get(f"{BASE}/loc/{cob['loc']['id']}", headers=who.headers)
        read = assert_conforms(response, "GET", "/loc/{id}")
        assert read["txid"] == cob["txid"] and read["location"] == cob["location"]


class TestUnlink:
    async def test_the_cob_loses_its_location_and_keeps_its_status(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        cob = await cob_at(client, who)
        loc_id = cob["loc"]["id"]
        response = await client.delete(f"{BASE}/loc/{loc_id}/txid", headers=who.headers)
        unlinked = assert_conforms(response, "DELETE", "/loc/{id}/txid")
        assert unlinked == {k: v for k, v in cob["loc"].items() if k != "txid"}
        read = await client.get(f"{BASE}/cob/{cob['txid']}", headers=who.headers)
        body = assert_conforms(read, "GET", "/cob/{txid}")
        assert body["status"] == "ATIVA" and body["revisao"] == 0
        assert not {"loc", "location", "pixCopiaECola"} & set(body)
        root = (await client.get(f"/cob/{cob['txid']}", headers=who.headers)).json()
        assert "loc" not in root and root["status"] == "ATIVA"
        for where in ("/qr/v2/", "/loc/"):
            assert (await client.get(where + token_of(cob["location"]))).status_code == 404
        paid = await client.post(
            "/sandbox/pix/pay",
            headers=who.headers,
            json={"pixCode": cob["pixCopiaECola"], "payer": {"name": "P", "document": CPF}},
        )
        assert paid.status_code == 422, paid.text
        again = await client.delete(f"{BASE}/loc/{loc_id}/txid", headers=who.headers)
        assert again.status_code == 200 and again.json() == unlinked

    async def test_the_payload_follows_the_location_to_the_next_cob(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """A printed QR code names the location: once it serves another cob, a payer who
        reads the same code sees (and pays) that one."""
        who = await receiver(rt, client)
        first = await cob_at(client, who)
        loc_id = first["loc"]["id"]
        await client.delete(f"{BASE}/loc/{loc_id}/txid", headers=who.headers)
        second = await cob_at(client, who, loc_id, valor={"original": "12.34"})
        assert second["location"] == first["location"] and second["loc"]["id"] == loc_id
        assert location_of(second["pixCopiaECola"]) == first["location"]
        response = await client.get(f"/qr/v2/{token_of(first['location'])}")
        payload = assert_conforms(response, "GET", PAYLOAD)
        assert payload["txid"] == second["txid"] and payload["valor"]["original"] == "12.34"
        legacy = await client.get(f"/loc/{token_of(first['location'])}")
        assert legacy.status_code == 200
        assert jws_claims(legacy.text)["txid"] == second["txid"]
        read = (await client.get(f"{BASE}/loc/{loc_id}", headers=who.headers)).json()
        assert read["txid"] == second["txid"]
        old = (await client.get(f"{BASE}/cob/{first['txid']}", headers=who.headers)).json()
        assert "loc" not in old and old["status"] == "ATIVA"


class TestQrCode:
    async def test_the_code_and_image_of_the_cob_served(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        cob = await cob_at(client, who)
        response = await client.get(f"{BASE}/loc/{cob['loc']['id']}/qrcode", headers=who.headers)
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"qrcode", "imagemQrcode"}
        assert body["qrcode"] == cob["pixCopiaECola"]
        prefix = "data:image/png;base64,"
        assert body["imagemQrcode"].startswith(prefix)
        png = base64.b64decode(body["imagemQrcode"].removeprefix(prefix))
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        assert brcode.decode(body["qrcode"]).location_url == cob["location"]

    async def test_a_location_serving_no_cob_has_none(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        free = await new_location(client, who)
        response = await client.get(f"{BASE}/loc/{free['id']}/qrcode", headers=who.headers)
        assert_problem(response, 404, "NaoEncontrado")


class TestList:
    async def test_pages_filters_and_the_parameters_echo(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        other = await receiver(rt, client, name="Outra")
        free = await new_location(client, who)
        cobv = await new_location(client, who, "cobv")
        cob = await cob_at(client, who)
        await new_location(client, other)

        async def listed(**params: Any) -> dict[str, Any]:
            response = await client.get(f"{BASE}/loc", headers=who.headers, params=window(**params))
            body: dict[str, Any] = assert_conforms(response, "GET", "/loc")
            return body

        everything = await listed()
        assert [loc["id"] for loc in everything["loc"]] == [
            free["id"],
            cobv["id"],
            cob["loc"]["id"],
        ]
        assert everything["loc"][2]["txid"] == cob["txid"]
        assert everything["parametros"]["paginacao"] == {
            "paginaAtual": 0,
            "itensPorPagina": 100,
            "quantidadeDePaginas": 1,
            "quantidadeTotalDeItens": 3,
        }
        with_txid = await listed(txIdPresente="true")
        assert [loc["id"] for loc in with_txid["loc"]] == [cob["loc"]["id"]]
        assert with_txid["parametros"]["txIdPresente"] is True
        without = await listed(txIdPresente="false", tipoCob="cob")
        assert [loc["id"] for loc in without["loc"]] == [free["id"]]
        assert without["parametros"]["tipoCob"] == "cob"
        page = await listed(**{"paginacao.itensPorPagina": 2, "paginacao.paginaAtual": 1})
        assert [loc["id"] for loc in page["loc"]] == [cob["loc"]["id"]]
        assert page["parametros"]["paginacao"]["quantidadeDePaginas"] == 2
        before = {"inicio": "2020-01-01T00:00:00Z", "fim": "2020-01-02T00:00:00Z"}
        response = await client.get(f"{BASE}/loc", headers=who.headers, params=before)
        assert assert_conforms(response, "GET", "/loc")["loc"] == []

    @pytest.mark.parametrize(
        ("params", "propriedade"),
        [
            ({"inicio": None}, "loc.inicio"),
            ({"inicio": "2030-01-01T00:00:00Z"}, "loc.fim"),
            ({"tipoCob": "boleto"}, "loc.tipoCob"),
            ({"paginacao.paginaAtual": -1}, "loc.paginacao.paginaAtual"),
            ({"paginacao.itensPorPagina": 0}, "loc.paginacao.itensPorPagina"),
        ],
    )
    async def test_a_query_that_makes_no_sense(
        self, rt: Runtime, client: httpx.AsyncClient, params: dict[str, Any], propriedade: str
    ) -> None:
        who = await receiver(rt, client)
        query = {k: v for k, v in window(**params).items() if v is not None}
        response = await client.get(f"{BASE}/loc", headers=who.headers, params=query)
        problem = assert_problem(response, 400, "PayloadLocationConsultaInvalida")
        assert any(v["propriedade"] == propriedade for v in problem["violacoes"]), problem


class TestScopes:
    async def test_writes_need_payloadlocation_write_and_reads_read(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        cob = await cob_at(client, who)
        loc_id = cob["loc"]["id"]
        reader = await scoped(rt, who.account, Scope.PAYLOADLOCATION_READ)
        writer = await scoped(rt, who.account, Scope.PAYLOADLOCATION_WRITE)
        cob_only = await scoped(rt, who.account, Scope.COB_WRITE, Scope.COB_READ)
        refusals = [
            ("POST", "/loc", reader, {"tipoCob": "cob"}),
            ("DELETE", "/loc/{id}/txid", reader, None),
            ("GET", "/loc/{id}", writer, None),
            ("GET", "/loc", writer, None),
            ("GET", "/loc/{id}", cob_only, None),
        ]
        for method, path, headers, body in refusals:
            response = await client.request(
                method,
                BASE + path.replace("{id}", str(loc_id)),
                headers=headers,
                json=body,
                params=window() if path == "/loc" else None,
            )
            assert_conforms(response, method, path)
            assert_problem(response, 403, "AcessoNegado")
        qr = await client.get(f"{BASE}/loc/{loc_id}/qrcode", headers=writer)
        assert_problem(qr, 403, "AcessoNegado")
        assert (await client.get(f"{BASE}/loc/{loc_id}", headers=reader)).json()["txid"]
        made = await client.post(f"{BASE}/loc", headers=writer, json={"tipoCob": "cob"})
        assert made.status_code == 201
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM locations") == 2
            assert await conn.fetchval("SELECT charge_id FROM locations WHERE id = $1", loc_id)


class TestPayload:
    async def test_a_cobs_payload_is_cob_payload_signed_by_a_published_key(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        cob = await cob_at(client, who, valor={"original": "10.00", "modalidadeAlteracao": 1})
        response = await client.get(f"/qr/v2/{token_of(cob['location'])}")
        assert response.headers["content-type"].startswith("application/jose")
        claims = assert_conforms(response, "GET", PAYLOAD)
        assert claims == await payload_at(client, cob["location"]) | {
            "calendario": claims["calendario"]
        }
        assert claims["txid"] == cob["txid"] and claims["revisao"] == 0
        assert claims["valor"] == {"original": "10.00", "modalidadeAlteracao": 1}
        assert claims["chave"] == who.key and claims["devedor"] == cob["devedor"]
        assert claims["calendario"]["criacao"] == cob["calendario"]["criacao"]
        assert claims["calendario"]["expiracao"] == 3600

    async def test_a_cash_in_charge_is_served_with_the_accounts_key(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        created = await client.post(
            "/api/pix/cash-in",
            headers=who.headers,
            json={
                "transaction": {"value": 15, "description": "Pedido", "externalId": "ci-1"},
                "payer": {"fullName": "Fulano", "document": CPF},
            },
        )
        assert created.status_code == 201, created.text
        location = location_of(created.json()["pixCode"])
        assert "/qr/v2/" in location
        response = await client.get(f"/qr/v2/{token_of(location)}")
        claims = assert_conforms(response, "GET", PAYLOAD)
        assert claims["chave"] == who.key and claims["valor"]["original"] == "15.00"

    async def test_a_paid_cob_is_no_longer_served(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        cob = await cob_at(client, who)
        paid = await client.post(
            "/sandbox/pix/pay",
            headers=who.headers,
            json={"pixCode": cob["pixCopiaECola"], "payer": {"name": "P", "document": CPF}},
        )
        assert paid.status_code == 201, paid.text
        response = await client.get(f"/qr/v2/{token_of(cob['location'])}")
        assert_conforms(response, "GET", PAYLOAD)
        assert_problem(response, 404, "CobPayloadNaoEncontrado")
        assert (await client.get(f"/loc/{token_of(cob['location'])}")).status_code == 410
        unknown = await client.get("/qr/v2/nothing-here")
        assert_problem(unknown, 404, "CobPayloadNaoEncontrado")
