"""GET /pix and GET /pix/{e2eid} of the API Pix: the PIX an account received, through HTTP,
each answer checked against the Central Bank's document."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from pixgate.accounts.queries import keys
from pixgate.runtime import Runtime
from tests.app.api_pix_document import assert_conforms
from tests.refunds.api_pix_helpers import (
    BASE,
    CNPJ,
    CPF,
    incoming,
    new_account,
    paid_charge,
    paid_cob,
    scoped,
)
from tests.support import drain

PROBLEM = "https://pix.bcb.gov.br/api/v2/error/"
DAY = timedelta(days=1)


async def read(client: httpx.AsyncClient, headers: dict[str, str], e2e: str) -> httpx.Response:
    return await client.get(f"{BASE}/pix/{e2e}", headers=headers)


async def listing(
    client: httpx.AsyncClient, headers: dict[str, str], **params: Any
) -> httpx.Response:
    now = datetime.now(UTC)
    query = {"inicio": (now - DAY).isoformat(), "fim": (now + DAY).isoformat(), **params}
    return await client.get(f"{BASE}/pix", params=query, headers=headers)


def listed(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = assert_conforms(response, "get", "/pix")
    return body


def e2es(body: dict[str, Any]) -> list[str]:
    return [pix["endToEndId"] for pix in body["pix"]]


def assert_problem(response: httpx.Response, status: int, kind: str, template: str) -> Any:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = assert_conforms(response, "get", template)
    assert body["type"] == PROBLEM + kind
    return body


class TestOne:
    async def test_a_pix_without_a_charge(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "25.50", infoPagador="Aluguel de março")
        response = await read(client, headers, e2e)
        assert response.status_code == 200, response.text
        pix = assert_conforms(response, "get", "/pix/{e2eid}")
        assert set(pix) == {"endToEndId", "valor", "chave", "horario", "infoPagador"}
        assert (pix["endToEndId"], pix["valor"], pix["chave"]) == (e2e, "25.50", account.pix_key)
        assert pix["infoPagador"] == "Aluguel de março"
        assert pix["horario"].endswith("Z")

    async def test_received_by_the_key_it_names(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account, headers = await new_account(rt, client)
        async with rt.db.connection() as conn:
            assert await keys.add(conn, account.account_id, "loja@example.com", "EMAIL")
        e2e = await incoming(client, headers, chave="Loja@Example.com")
        pix = assert_conforms(await read(client, headers, e2e), "get", "/pix/{e2eid}")
        assert pix["chave"] == "loja@example.com"
        assert "infoPagador" not in pix

    async def test_a_key_of_another_account_is_refused(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        other, _ = await new_account(rt, client)
        _, headers = await new_account(rt, client)
        response = await client.post(
            "/sandbox/pix/incoming",
            json={"value": "1.00", "payer": {"name": "P", "document": CPF}, "chave": other.pix_key},
            headers=headers,
        )
        assert response.status_code == 400, response.text
        assert "chave" in response.text

    async def test_a_cob_paid_has_its_txid_and_chave(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account, headers = await new_account(rt, client)
        txid, e2e = await paid_cob(client, headers, account.pix_key)
        pix = assert_conforms(await read(client, headers, e2e), "get", "/pix/{e2eid}")
        assert (pix["txid"], pix["valor"], pix["chave"]) == (txid, "123.45", account.pix_key)

    async def test_a_cash_in_charge_paid_arrives_by_the_first_key(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account, headers = await new_account(rt, client)
        e2e = await paid_charge(client, headers)
        pix = assert_conforms(await read(client, headers, e2e), "get", "/pix/{e2eid}")
        assert pix["chave"] == account.pix_key and pix["txid"]

    async def test_devolucoes_appear_and_settle(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "50.00")
        for refund_id, valor, scenario in (
            ("dev1", "10.00", None),
            ("dev2", "5.00", "ORDER_REJECTED"),
        ):
            put = await client.put(
                f"{BASE}/pix/{e2e}/devolucao/{refund_id}",
                json={"valor": valor},
                headers={**headers, **({"X-Sandbox-Scenario": scenario} if scenario else {})},
            )
            assert put.status_code == 201, put.text
        pending = assert_conforms(await read(client, headers, e2e), "get", "/pix/{e2eid}")
        assert [(d["id"], d["valor"], d["status"]) for d in pending["devolucoes"]] == [
            ("dev1", "10.00", "EM_PROCESSAMENTO"),
            ("dev2", "5.00", "EM_PROCESSAMENTO"),
        ]
        await drain(rt)
        settled = assert_conforms(await read(client, headers, e2e), "get", "/pix/{e2eid}")
        done, refused = settled["devolucoes"]
        assert done["status"] == "DEVOLVIDO" and done["horario"]["liquidacao"].endswith("Z")
        assert refused["status"] == "NAO_REALIZADO" and refused["motivo"]
        assert "liquidacao" not in refused["horario"]

    async def test_another_accounts_pix_is_not_found(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, owner = await new_account(rt, client)
        _, stranger = await new_account(rt, client)
        e2e = await incoming(client, owner)
        body = assert_problem(
            await read(client, stranger, e2e), 404, "NaoEncontrado", "/pix/{e2eid}"
        )
        assert body["status"] == 404
        assert (await read(client, owner, e2e)).status_code == 200

    async def test_a_malformed_e2eid_is_a_problem(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        response = await read(client, headers, "E123")
        assert response.status_code == 400, response.text
        assert response.json()["type"] == PROBLEM + "PixConsultaInvalida"


class TestList:
    async def test_parameters_echoed_with_the_page_totals(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        sent = [await incoming(client, headers, f"{n}.00") for n in (1, 2, 3)]
        first = listed(await listing(client, headers, **{"paginacao.itensPorPagina": 2}))
        assert first["parametros"]["paginacao"] == {
            "paginaAtual": 0,
            "itensPorPagina": 2,
            "quantidadeDePaginas": 2,
            "quantidadeTotalDeItens": 3,
        }
        assert set(first["parametros"]) == {"inicio", "fim", "paginacao"}
        second = listed(
            await listing(
                client,
                headers,
                **{"paginacao.itensPorPagina": 2, "paginacao.paginaAtual": 1},
            )
        )
        assert e2es(first) + e2es(second) == sent
        assert [pix["valor"] for pix in second["pix"]] == ["3.00"]
        beyond = listed(await listing(client, headers, **{"paginacao.paginaAtual": 5}))
        assert beyond["pix"] == [] and beyond["parametros"]["paginacao"]["paginaAtual"] == 5

    async def test_nothing_found_is_one_empty_page(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        body = listed(await listing(client, headers))
        assert body["pix"] == []
        assert body["parametros"]["paginacao"] == {
            "paginaAtual": 0,
            "itensPorPagina": 100,
            "quantidadeDePaginas": 1,
            "quantidadeTotalDeItens": 0,
        }

    async def test_the_period_counts_when_it_was_credited(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        now = datetime.now(UTC)
        old = await incoming(client, headers, paidAt=(now - 10 * DAY).isoformat())
        new = await incoming(client, headers)
        assert e2es(listed(await listing(client, headers))) == [new]
        wide = {"inicio": (now - 11 * DAY).isoformat(), "fim": (now + DAY).isoformat()}
        response = await client.get(f"{BASE}/pix", params=wide, headers=headers)
        assert e2es(listed(response)) == [old, new]
        exact = {"inicio": (now - 11 * DAY).isoformat(), "fim": (now - 9 * DAY).isoformat()}
        response = await client.get(f"{BASE}/pix", params=exact, headers=headers)
        assert e2es(listed(response)) == [old]

    async def test_filters(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account, headers = await new_account(rt, client)
        txid, by_cob = await paid_cob(client, headers, account.pix_key)
        plain = await incoming(client, headers, "30.00")
        by_company = await incoming(client, headers, payer={"name": "Empresa", "document": CNPJ})
        put = await client.put(
            f"{BASE}/pix/{plain}/devolucao/d1", json={"valor": "1.00"}, headers=headers
        )
        assert put.status_code == 201, put.text

        def found(**params: Any) -> Any:
            return listing(client, headers, **params)

        assert e2es(listed(await found(txid=txid))) == [by_cob]
        assert e2es(listed(await found(txIdPresente="true"))) == [by_cob]
        assert e2es(listed(await found(txIdPresente="false"))) == [plain, by_company]
        with_refund = listed(await found(devolucaoPresente="true"))
        assert e2es(with_refund) == [plain]
        assert with_refund["pix"][0]["devolucoes"][0]["id"] == "d1"
        assert with_refund["parametros"]["devolucaoPresente"] is True
        assert e2es(listed(await found(devolucaoPresente="false"))) == [by_cob, by_company]
        assert e2es(listed(await found(cpf=CPF))) == [by_cob, plain]
        by_cnpj = listed(await found(cnpj=CNPJ))
        assert e2es(by_cnpj) == [by_company] and by_cnpj["parametros"]["cnpj"] == CNPJ

    async def test_only_the_callers_pix(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        _, mine = await new_account(rt, client)
        _, theirs = await new_account(rt, client)
        kept = await incoming(client, mine)
        await incoming(client, theirs)
        assert e2es(listed(await listing(client, mine))) == [kept]

    @pytest.mark.parametrize(
        ("params", "field"),
        [
            ({"cpf": CPF, "cnpj": CNPJ}, "cnpj"),
            ({"paginacao.paginaAtual": -1}, "paginacao.paginaAtual"),
            ({"paginacao.itensPorPagina": 0}, "paginacao.itensPorPagina"),
            ({"paginacao.itensPorPagina": 1001}, "paginacao.itensPorPagina"),
            ({"cpf": "123"}, "cpf"),
            ({"inicio": "2026-01-01"}, "inicio"),
            ({"fim": "yesterday"}, "fim"),
        ],
    )
    async def test_a_query_out_of_the_schema_is_pix_consulta_invalida(
        self, rt: Runtime, client: httpx.AsyncClient, params: dict[str, Any], field: str
    ) -> None:
        _, headers = await new_account(rt, client)
        body = assert_problem(
            await listing(client, headers, **params), 400, "PixConsultaInvalida", "/pix"
        )
        assert field in [v["propriedade"] for v in body["violacoes"]], body

    async def test_fim_before_inicio_and_inicio_missing(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        now = datetime.now(UTC)
        backwards = {"inicio": now.isoformat(), "fim": (now - DAY).isoformat()}
        response = await client.get(f"{BASE}/pix", params=backwards, headers=headers)
        assert_problem(response, 400, "PixConsultaInvalida", "/pix")
        response = await client.get(f"{BASE}/pix", params={"fim": now.isoformat()}, headers=headers)
        body = assert_problem(response, 400, "PixConsultaInvalida", "/pix")
        assert "inicio" in [v["propriedade"] for v in body["violacoes"]]


class TestScopes:
    async def test_pix_read_is_needed(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account, headers = await new_account(rt, client)
        e2e = await incoming(client, headers)
        narrow = await scoped(client, account, "cob.read pix.write")
        assert_problem(await read(client, narrow, e2e), 403, "AcessoNegado", "/pix/{e2eid}")
        assert_problem(await listing(client, narrow), 403, "AcessoNegado", "/pix")
        reader = await scoped(client, account, "pix.read")
        assert (await read(client, reader, e2e)).status_code == 200
        assert e2es(listed(await listing(client, reader))) == [e2e]

    async def test_no_token_is_acesso_negado(self, client: httpx.AsyncClient) -> None:
        response = await client.get(f"{BASE}/pix/{'E' * 32}")
        assert_problem(response, 403, "AcessoNegado", "/pix/{e2eid}")
