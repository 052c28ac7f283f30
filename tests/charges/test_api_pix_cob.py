"""The API Pix's immediate charges through HTTP, under its base path: PUT, POST, PATCH and
GET /cob/{txid} and GET /cob, checked against the document (CobGerada, CobCompleta,
CobsConsultadas, its problems), their rules, revisions, pages and filters, their scopes,
and the same cobs read through the root-level `/cob/{txid}` of our spec."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from pixgate.accounts.public import Scope
from pixgate.core.pix import brcode
from pixgate.runtime import Runtime
from tests.app.api_pix_document import assert_conforms
from tests.charges.api_pix_helpers import (
    BASE,
    CNPJ,
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


async def put_cob(
    client: httpx.AsyncClient, who: Receiver, txid: str | None = None, **changes: Any
) -> dict[str, Any]:
    txid = txid or new_txid()
    response = await client.put(
        f"{BASE}/cob/{txid}", headers=who.headers, json=cob_body(who.key, **changes)
    )
    body: dict[str, Any] = assert_conforms(response, "PUT", "/cob/{txid}")
    assert response.status_code == 201
    return body


async def pay(client: httpx.AsyncClient, headers: dict[str, str], code: str) -> httpx.Response:
    return await client.post(
        "/sandbox/pix/pay",
        headers=headers,
        json={"pixCode": code, "payer": {"name": "Pagador", "document": CPF}},
    )


class TestCreate:
    async def test_put_answers_cob_gerada_served_at_its_location(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client, name="Padaria São João")
        txid = new_txid()
        cob = await put_cob(client, who, txid)
        assert cob["txid"] == txid and cob["revisao"] == 0 and cob["status"] == "ATIVA"
        assert cob["calendario"]["expiracao"] == 3600
        assert cob["calendario"]["criacao"].endswith("Z")
        assert cob["valor"] == {"original": "37.00", "modalidadeAlteracao": 0}
        assert cob["chave"] == who.key
        assert cob["devedor"] == {"cpf": CPF, "nome": "Fulano de Tal"}
        assert cob["solicitacaoPagador"] == "Serviço realizado."
        assert cob["infoAdicionais"] == [{"nome": "Campo 1", "valor": "Informação"}]
        host = rt.settings.public_url.split("://", 1)[1]
        assert re.fullmatch(re.escape(host) + r"/qr/v2/[0-9a-f]{32}", cob["location"])
        assert len(cob["location"]) <= 77
        loc = cob["loc"]
        assert loc["location"] == cob["location"] and loc["tipoCob"] == "cob"
        assert loc["txid"] == txid and isinstance(loc["id"], int) and loc["criacao"]
        code = brcode.decode(cob["pixCopiaECola"])
        assert code.location_url == cob["location"]
        assert code.amount_cents == 3700 and code.merchant_name == "Padaria Sao Joao"
        payload = await payload_at(client, cob["location"])
        assert payload["txid"] == txid and payload["chave"] == who.key

    async def test_post_picks_the_txid(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        who = await receiver(rt, client)
        response = await client.post(f"{BASE}/cob", headers=who.headers, json=cob_body(who.key))
        cob = assert_conforms(response, "POST", "/cob")
        assert response.status_code == 201
        assert re.fullmatch(r"[a-zA-Z0-9]{26,35}", cob["txid"])
        read = await client.get(f"{BASE}/cob/{cob['txid']}", headers=who.headers)
        assert read.json() == cob
        again = await client.post(f"{BASE}/cob", headers=who.headers, json=cob_body(who.key))
        assert again.json()["txid"] != cob["txid"]

    async def test_expiracao_defaults_to_a_day(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        cob = await put_cob(client, who, calendario={})
        assert cob["calendario"]["expiracao"] == 86400

    async def test_a_txid_in_use_is_cob_operacao_invalida_here_and_409_at_the_root(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        await put_cob(client, who, txid)
        again = await client.put(f"{BASE}/cob/{txid}", headers=who.headers, json=cob_body(who.key))
        assert_conforms(again, "PUT", "/cob/{txid}")
        assert_problem(again, 400, "CobOperacaoInvalida")
        root = await client.put(f"/cob/{txid}", headers=who.headers, json=cob_body(who.key))
        assert root.status_code == 409
        assert set(root.json()) == {"statusCode", "message", "error"}

    @pytest.mark.parametrize(
        ("changes", "propriedade"),
        [
            ({"chave": None}, "cob.chave"),
            ({"valor": {"original": "0.00"}}, "cob.valor.original"),
            ({"valor": {"original": "37,00"}}, "cob.valor.original"),
            ({"calendario": {"expiracao": 0}}, "cob.calendario.expiracao"),
            ({"devedor": {"cpf": "12345678900", "nome": "X"}}, "cob.devedor"),
            ({"solicitacaoPagador": "x" * 141}, "cob.solicitacaoPagador"),
            ({"loc": {"id": "um"}}, "cob.loc.id"),
            (
                {
                    "valor": {
                        "original": "0.00",
                        "retirada": {
                            "saque": {
                                "valor": "5.00",
                                "modalidadeAgente": "AGPSS",
                                "prestadorDoServicoDeSaque": "12345678",
                            }
                        },
                    }
                },
                "cob.valor.retirada",
            ),
        ],
    )
    async def test_a_body_the_schema_refuses_names_its_property(
        self,
        rt: Runtime,
        client: httpx.AsyncClient,
        changes: dict[str, Any],
        propriedade: str,
    ) -> None:
        who = await receiver(rt, client)
        body = cob_body(who.key, **changes)
        response = await client.put(f"{BASE}/cob/{new_txid()}", headers=who.headers, json=body)
        assert_conforms(response, "PUT", "/cob/{txid}")
        problem = assert_problem(response, 400, "CobOperacaoInvalida")
        assert any(v["propriedade"].startswith(propriedade) for v in problem["violacoes"])
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM charges") == 0

    @pytest.mark.parametrize("whose", ["another account's", "nobody's", "not a key"])
    async def test_chave_must_be_a_key_of_the_receiving_account(
        self, rt: Runtime, client: httpx.AsyncClient, whose: str
    ) -> None:
        who = await receiver(rt, client)
        other = await receiver(rt, client, name="Outra")
        key = {
            "another account's": other.key,
            "nobody's": "ninguem@example.com",
            "not a key": "x y",
        }[whose]
        body = cob_body(key)
        response = await client.put(f"{BASE}/cob/{new_txid()}", headers=who.headers, json=body)
        problem = assert_problem(response, 400, "CobOperacaoInvalida")
        assert problem["violacoes"][0]["propriedade"] == "cob.chave"
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM charges") == 0

    async def test_a_key_in_another_spelling_is_the_same_key(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        cob = await put_cob(client, who, chave=who.key.upper())
        assert cob["chave"] == who.key.upper()


class TestLocations:
    async def test_loc_id_binds_a_free_location_of_the_account(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        loc = await client.post(f"{BASE}/loc", headers=who.headers, json={"tipoCob": "cob"})
        created = loc.json()
        txid = new_txid()
        cob = await put_cob(client, who, txid, loc={"id": created["id"]})
        assert cob["loc"]["id"] == created["id"]
        assert cob["location"] == created["location"]
        assert location_of(cob["pixCopiaECola"]) == created["location"]
        read = (await client.get(f"{BASE}/loc/{created['id']}", headers=who.headers)).json()
        assert read["txid"] == txid
        taken = await client.put(
            f"{BASE}/cob/{new_txid()}",
            headers=who.headers,
            json=cob_body(who.key, loc={"id": created["id"]}),
        )
        problem = assert_problem(taken, 400, "CobOperacaoInvalida")
        assert problem["violacoes"][0]["propriedade"] == "cob.loc.id"

    @pytest.mark.parametrize("which", ["another account's", "a cobv location", "unknown"])
    async def test_a_location_a_cob_cannot_take_is_refused(
        self, rt: Runtime, client: httpx.AsyncClient, which: str
    ) -> None:
        who = await receiver(rt, client)
        other = await receiver(rt, client, name="Outra")
        owner, tipo = {
            "another account's": (other, "cob"),
            "a cobv location": (who, "cobv"),
            "unknown": (who, "cob"),
        }[which]
        made = await client.post(f"{BASE}/loc", headers=owner.headers, json={"tipoCob": tipo})
        loc_id = made.json()["id"] + (1000 if which == "unknown" else 0)
        response = await client.put(
            f"{BASE}/cob/{new_txid()}",
            headers=who.headers,
            json=cob_body(who.key, loc={"id": loc_id}),
        )
        assert_problem(response, 400, "CobOperacaoInvalida")
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM charges") == 0

    async def test_patch_moves_the_cob_to_another_location_without_a_revision(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        cob = await put_cob(client, who, txid)
        free = await client.post(f"{BASE}/loc", headers=who.headers, json={"tipoCob": "cob"})
        target = free.json()
        moved = await client.patch(
            f"{BASE}/cob/{txid}", headers=who.headers, json={"loc": {"id": target["id"]}}
        )
        body = assert_conforms(moved, "PATCH", "/cob/{txid}")
        assert body["revisao"] == 0
        assert body["loc"]["id"] == target["id"] and body["location"] == target["location"]
        assert location_of(body["pixCopiaECola"]) == target["location"]
        assert (await payload_at(client, target["location"]))["txid"] == txid
        old = await client.get(f"/qr/v2/{token_of(cob['location'])}")
        assert_problem(old, 404, "CobPayloadNaoEncontrado")
        former = (await client.get(f"{BASE}/loc/{cob['loc']['id']}", headers=who.headers)).json()
        assert "txid" not in former


class TestReadAcrossFamilies:
    async def test_root_put_read_here(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        body = cob_body("loja@example.com")
        root = (await client.put(f"/cob/{txid}", headers=who.headers, json=body)).json()
        response = await client.get(f"{BASE}/cob/{txid}", headers=who.headers)
        cob = assert_conforms(response, "GET", "/cob/{txid}")
        assert cob["txid"] == txid and cob["revisao"] == 0
        assert cob["pixCopiaECola"] == root["pixCopiaECola"] == root["location"]
        assert cob["loc"]["id"] == root["loc"]["id"]
        assert cob["location"] == location_of(root["location"])
        assert cob["chave"] == "loja@example.com"

    async def test_a_root_cob_without_chave_receives_on_the_accounts_key(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        body = cob_body(who.key, chave=None)
        root = await client.put(f"/cob/{txid}", headers=who.headers, json=body)
        assert "chave" not in root.json()
        response = await client.get(f"{BASE}/cob/{txid}", headers=who.headers)
        assert assert_conforms(response, "GET", "/cob/{txid}")["chave"] == who.key
        assert (await payload_at(client, response.json()["location"]))["chave"] == who.key

    async def test_put_here_read_at_the_root(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        cob = await put_cob(client, who, txid)
        root = await client.get(f"/cob/{txid}", headers=who.headers)
        assert root.status_code == 200
        read = root.json()
        assert read["location"] == read["loc"]["location"] == cob["pixCopiaECola"]
        assert read["loc"]["id"] == cob["loc"]["id"]
        assert read["chave"] == who.key and read["revisao"] == 0

    async def test_another_accounts_cob_is_not_found(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        other = await receiver(rt, client, name="Outra")
        txid = new_txid()
        await put_cob(client, who, txid)
        response = await client.get(f"{BASE}/cob/{txid}", headers=other.headers)
        assert_conforms(response, "GET", "/cob/{txid}")
        assert_problem(response, 404, "NaoEncontrado")
        patched = await client.patch(
            f"{BASE}/cob/{txid}", headers=other.headers, json={"solicitacaoPagador": "x"}
        )
        assert_problem(patched, 404, "NaoEncontrado")

    async def test_a_paid_cob_lists_its_pix(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        cob = await put_cob(client, who, txid)
        paid = await pay(client, who.headers, cob["pixCopiaECola"])
        assert paid.status_code == 201, paid.text
        response = await client.get(f"{BASE}/cob/{txid}", headers=who.headers)
        read = assert_conforms(response, "GET", "/cob/{txid}")
        assert read["status"] == "CONCLUIDA"
        assert read["pix"][0]["endToEndId"] == paid.json()["endToEndId"]
        assert read["pix"][0]["valor"] == "37.00" and read["pix"][0]["txid"] == txid


class TestRevise:
    async def test_each_patch_is_a_revision_kept_for_reading(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        cob = await put_cob(client, who, txid)
        first = await client.patch(
            f"{BASE}/cob/{txid}",
            headers=who.headers,
            json={"valor": {"original": "40.00"}, "solicitacaoPagador": "Revista"},
        )
        revised = assert_conforms(first, "PATCH", "/cob/{txid}")
        assert first.status_code == 200
        assert revised["revisao"] == 1 and revised["valor"]["original"] == "40.00"
        assert revised["devedor"] == cob["devedor"] and revised["location"] == cob["location"]
        assert brcode.decode(revised["pixCopiaECola"]).amount_cents == 4000
        root = await client.patch(
            f"/cob/{txid}", headers=who.headers, json={"calendario": {"expiracao": 7200}}
        )
        assert root.status_code == 200 and root.json()["revisao"] == 2
        current = (await client.get(f"{BASE}/cob/{txid}", headers=who.headers)).json()
        assert current["revisao"] == 2 and current["calendario"]["expiracao"] == 7200
        for n, (amount, expiracao, pedido) in enumerate(
            [
                ("37.00", 3600, "Serviço realizado."),
                ("40.00", 3600, "Revista"),
                ("40.00", 7200, "Revista"),
            ]
        ):
            response = await client.get(
                f"{BASE}/cob/{txid}", headers=who.headers, params={"revisao": n}
            )
            past = assert_conforms(response, "GET", "/cob/{txid}")
            assert past["revisao"] == n and past["valor"]["original"] == amount
            assert past["calendario"]["expiracao"] == expiracao
            assert past["solicitacaoPagador"] == pedido
        assert (await payload_at(client, cob["location"]))["revisao"] == 2
        unknown = await client.get(f"{BASE}/cob/{txid}", headers=who.headers, params={"revisao": 3})
        problem = assert_problem(unknown, 400, "CobConsultaInvalida")
        assert problem["violacoes"][0]["propriedade"] == "cob.revisao"

    async def test_removal_is_a_revision_and_ends_the_cob(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        cob = await put_cob(client, who, txid)
        removed = await client.patch(
            f"{BASE}/cob/{txid}",
            headers=who.headers,
            json={"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"},
        )
        body = assert_conforms(removed, "PATCH", "/cob/{txid}")
        assert body["status"] == "REMOVIDA_PELO_USUARIO_RECEBEDOR" and body["revisao"] == 1
        at_zero = await client.get(f"{BASE}/cob/{txid}", headers=who.headers, params={"revisao": 0})
        assert at_zero.json()["status"] == "ATIVA"
        again = await client.patch(
            f"{BASE}/cob/{txid}", headers=who.headers, json={"solicitacaoPagador": "x"}
        )
        assert_conforms(again, "PATCH", "/cob/{txid}")
        assert_problem(again, 400, "CobOperacaoInvalida")
        assert (await pay(client, who.headers, cob["pixCopiaECola"])).status_code == 409
        gone = await client.get(f"/qr/v2/{token_of(cob['location'])}")
        assert_problem(gone, 404, "CobPayloadNaoEncontrado")

    async def test_removal_with_other_changes_is_refused(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        await put_cob(client, who, txid)
        response = await client.patch(
            f"{BASE}/cob/{txid}",
            headers=who.headers,
            json={"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR", "valor": {"original": "1.00"}},
        )
        assert_problem(response, 400, "CobOperacaoInvalida")
        read = (await client.get(f"{BASE}/cob/{txid}", headers=who.headers)).json()
        assert read["status"] == "ATIVA" and read["revisao"] == 0

    async def test_a_paid_cob_cannot_be_revised(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        cob = await put_cob(client, who, txid)
        assert (await pay(client, who.headers, cob["pixCopiaECola"])).status_code == 201
        response = await client.patch(
            f"{BASE}/cob/{txid}", headers=who.headers, json={"valor": {"original": "1.00"}}
        )
        assert_problem(response, 400, "CobOperacaoInvalida")

    async def test_patch_chave_must_be_the_accounts(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        other = await receiver(rt, client, name="Outra")
        txid = new_txid()
        await put_cob(client, who, txid)
        response = await client.patch(
            f"{BASE}/cob/{txid}", headers=who.headers, json={"chave": other.key}
        )
        problem = assert_problem(response, 400, "CobOperacaoInvalida")
        assert problem["violacoes"][0]["propriedade"] == "cob.chave"


class TestScopes:
    async def test_writes_need_cob_write_and_reads_cob_read(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        await put_cob(client, who, txid)
        reader = await scoped(rt, who.account, Scope.COB_READ)
        writer = await scoped(rt, who.account, Scope.COB_WRITE)
        body = cob_body(who.key)
        refusals = [
            (
                await client.put(f"{BASE}/cob/{new_txid()}", headers=reader, json=body),
                "PUT",
                "/cob/{txid}",
            ),
            (await client.post(f"{BASE}/cob", headers=reader, json=body), "POST", "/cob"),
            (
                await client.patch(f"{BASE}/cob/{txid}", headers=reader, json={"chave": who.key}),
                "PATCH",
                "/cob/{txid}",
            ),
            (await client.get(f"{BASE}/cob/{txid}", headers=writer), "GET", "/cob/{txid}"),
            (await client.get(f"{BASE}/cob", headers=writer, params=window()), "GET", "/cob"),
        ]
        for response, method, path in refusals:
            assert_conforms(response, method, path)
            assert_problem(response, 403, "AcessoNegado")
        assert (await client.get(f"{BASE}/cob/{txid}", headers=reader)).status_code == 200
        made = await client.put(f"{BASE}/cob/{new_txid()}", headers=writer, json=body)
        assert made.status_code == 201
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM charges") == 2

    async def test_the_root_routes_check_the_same_scopes(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        txid = new_txid()
        body = cob_body(who.key)
        reader = await scoped(rt, who.account, Scope.COB_READ)
        writer = await scoped(rt, who.account, Scope.COB_WRITE)
        refused = await client.put(f"/cob/{txid}", headers=reader, json=body)
        assert refused.status_code == 403
        assert set(refused.json()) == {"statusCode", "message", "error"}
        assert (await client.put(f"/cob/{txid}", headers=writer, json=body)).status_code == 201
        assert (await client.get(f"/cob/{txid}", headers=writer)).status_code == 403
        assert (await client.get(f"/cob/{txid}", headers=reader)).status_code == 200
        patch = {"solicitacaoPagador": "x"}
        assert (await client.patch(f"/cob/{txid}", headers=reader, json=patch)).status_code == 403

    async def test_without_a_token_is_acesso_negado(self, client: httpx.AsyncClient) -> None:
        response = await client.get(f"{BASE}/cob/{new_txid()}")
        assert_conforms(response, "GET", "/cob/{txid}")
        assert_problem(response, 403, "AcessoNegado")


class TestList:
    async def test_pages_and_the_parameters_echo(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        who = await receiver(rt, client)
        other = await receiver(rt, client, name="Outra")
        txids = [(await put_cob(client, who))["txid"] for _ in range(3)]
        await put_cob(client, other)
        params = window(**{"paginacao.itensPorPagina": 2})
        first = await client.get(f"{BASE}/cob", headers=who.headers, params=params)
        body = assert_conforms(first, "GET", "/cob")
        assert [c["txid"] for c in body["cobs"]] == txids[:2]
        assert body["parametros"]["paginacao"] == {
            "paginaAtual": 0,
            "itensPorPagina": 2,
            "quantidadeDePaginas": 2,
            "quantidadeTotalDeItens": 3,
        }
        assert body["parametros"]["inicio"] and body["parametros"]["fim"]
        params["paginacao.paginaAtual"] = 1
        second = (await client.get(f"{BASE}/cob", headers=who.headers, params=params)).json()
        assert [c["txid"] for c in second["cobs"]] == txids[2:]
        params["paginacao.paginaAtual"] = 5
        past = (await client.get(f"{BASE}/cob", headers=who.headers, params=params)).json()
        assert past["cobs"] == [] and past["parametros"]["paginacao"]["quantidadeTotalDeItens"] == 3
        listed = body["cobs"][0]
        single = (await client.get(f"{BASE}/cob/{txids[0]}", headers=who.headers)).json()
        assert {k: v for k, v in listed.items() if k != "idCob"} == single

    async def test_the_window_bounds_the_list(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        who = await receiver(rt, client)
        await put_cob(client, who)
        earlier = {"inicio": "2020-01-01T00:00:00Z", "fim": "2020-12-31T23:59:59Z"}
        response = await client.get(f"{BASE}/cob", headers=who.headers, params=earlier)
        body = assert_conforms(response, "GET", "/cob")
        assert body["cobs"] == []
        assert body["parametros"]["paginacao"]["quantidadeDePaginas"] == 1

    async def test_filters(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        who = await receiver(rt, client)
        by_cpf = await put_cob(client, who)
        by_cnpj = await put_cob(client, who, devedor={"cnpj": CNPJ, "nome": "Empresa"})
        paid = await put_cob(client, who, devedor=None)
        assert (await pay(client, who.headers, paid["pixCopiaECola"])).status_code == 201
        unlinked = await put_cob(client, who)
        deleted = await client.delete(
            f"{BASE}/loc/{unlinked['loc']['id']}/txid", headers=who.headers
        )
        assert deleted.status_code == 200

        async def txids(**filters: Any) -> list[str]:
            response = await client.get(
                f"{BASE}/cob", headers=who.headers, params=window(**filters)
            )
            body = assert_conforms(response, "GET", "/cob")
            for name, value in filters.items():
                shown = body["parametros"][name]
                assert shown == value or str(shown).lower() == str(value).lower()
            return [c["txid"] for c in body["cobs"]]

        assert await txids(cpf=CPF) == [by_cpf["txid"], unlinked["txid"]]
        assert await txids(cnpj=CNPJ) == [by_cnpj["txid"]]
        assert await txids(status="CONCLUIDA") == [paid["txid"]]
        assert await txids(status="ATIVA") == [by_cpf["txid"], by_cnpj["txid"], unlinked["txid"]]
        assert await txids(locationPresente="false") == [unlinked["txid"]]
        assert len(await txids(locationPresente="true")) == 3

    @pytest.mark.parametrize(
        ("params", "propriedade"),
        [
            ({"inicio": None}, "cob.inicio"),
            ({"fim": None}, "cob.fim"),
            ({"inicio": "ontem"}, "cob.inicio"),
            ({"inicio": "2030-01-01T00:00:00Z"}, "cob.fim"),
            ({"cpf": CPF, "cnpj": CNPJ}, "cob.cnpj"),
            ({"paginacao.paginaAtual": -1}, "cob.paginacao.paginaAtual"),
            ({"paginacao.itensPorPagina": 0}, "cob.paginacao.itensPorPagina"),
            ({"paginacao.itensPorPagina": 1001}, "cob.paginacao.itensPorPagina"),
            ({"status": "PAGA"}, "cob.status"),
        ],
    )
    async def test_a_query_that_makes_no_sense_is_cob_consulta_invalida(
        self, rt: Runtime, client: httpx.AsyncClient, params: dict[str, Any], propriedade: str
    ) -> None:
        who = await receiver(rt, client)
        query = {k: v for k, v in window(**params).items() if v is not None}
        response = await client.get(f"{BASE}/cob", headers=who.headers, params=query)
        problem = assert_problem(response, 400, "CobConsultaInvalida")
        assert any(v["propriedade"] == propriedade for v in problem["violacoes"]), problem
