"""PUT and GET /pix/{e2eid}/devolucao/{id} of the API Pix: the same refunds as the
root-level routes, answered as the document's Devolucao, errors as RFC 7807 problems; and
the scopes both families need. Every answer of the API Pix is checked against the
Central Bank's document."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from pixgate.runtime import Runtime
from tests.app.api_pix_document import assert_conforms
from tests.helpers import SIMPLE_BODY
from tests.refunds.api_pix_helpers import BASE, incoming, new_account, scoped
from tests.refunds.helpers import balance, count_rows, send
from tests.support import FixedClock, drain

PROBLEM = "https://pix.bcb.gov.br/api/v2/error/"
TEMPLATE = "/pix/{e2eid}/devolucao/{id}"


async def put(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    e2e: str,
    refund_id: str,
    body: Any,
    *,
    scenario: str | None = None,
) -> httpx.Response:
    extra = {"X-Sandbox-Scenario": scenario} if scenario else {}
    return await client.put(
        f"{BASE}/pix/{e2e}/devolucao/{refund_id}", json=body, headers={**headers, **extra}
    )


async def get(
    client: httpx.AsyncClient, headers: dict[str, str], e2e: str, refund_id: str
) -> httpx.Response:
    return await client.get(f"{BASE}/pix/{e2e}/devolucao/{refund_id}", headers=headers)


def conforming(response: httpx.Response, method: str, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = assert_conforms(response, method, TEMPLATE)
    return body


def problem(response: httpx.Response, method: str, status: int, kind: str) -> dict[str, Any]:
    assert response.headers["content-type"].startswith("application/problem+json")
    body = conforming(response, method, status)
    assert body["type"] == PROBLEM + kind, body
    return body


class TestDevolucao:
    async def test_em_processamento_then_devolvido(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "100.00")
        made = conforming(
            await put(client, headers, e2e, "dev1", {"valor": "7.89", "descricao": "Pedido 9"}),
            "put",
            201,
        )
        assert set(made) == {"id", "rtrId", "valor", "natureza", "descricao", "horario", "status"}
        assert (made["id"], made["valor"], made["natureza"], made["status"]) == (
            "dev1",
            "7.89",
            "ORIGINAL",
            "EM_PROCESSAMENTO",
        )
        assert set(made["horario"]) == {"solicitacao"}
        assert await balance(rt, account.account_id) == (10000 - 789, 789)
        await drain(rt)
        settled = conforming(await get(client, headers, e2e, "dev1"), "get", 200)
        assert settled["status"] == "DEVOLVIDO" and settled["rtrId"] == made["rtrId"]
        assert settled["horario"]["solicitacao"] == made["horario"]["solicitacao"]
        assert settled["horario"]["liquidacao"].endswith("Z")
        assert "motivo" not in settled

    async def test_nao_realizado_with_motivo(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "100.00")
        body = {"valor": "20.00", "natureza": "RETIRADA"}
        conforming(
            await put(client, headers, e2e, "f1", body, scenario="ORDER_REJECTED"), "put", 201
        )
        await drain(rt)
        refused = conforming(await get(client, headers, e2e, "f1"), "get", 200)
        assert (refused["status"], refused["natureza"]) == ("NAO_REALIZADO", "RETIRADA")
        assert refused["motivo"] and "liquidacao" not in refused["horario"]
        assert await balance(rt, account.account_id) == (10000, 0)

    async def test_one_refund_read_through_both_families(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "100.00")
        here = conforming(await put(client, headers, e2e, "a1", {"valor": "1.00"}), "put", 201)
        root = await client.get(f"/pix/{e2e}/devolucao/a1", headers=headers)
        assert root.status_code == 200 and root.json() == here
        made_at_root = await client.put(
            f"/pix/{e2e}/devolucao/b1", json={"valor": "2.00"}, headers=headers
        )
        assert made_at_root.status_code == 201, made_at_root.text
        read_here = conforming(await get(client, headers, e2e, "b1"), "get", 200)
        assert read_here == made_at_root.json()

    async def test_a_repeated_put_replays_the_refund(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "100.00")
        first = conforming(await put(client, headers, e2e, "r1", {"valor": "3.00"}), "put", 201)
        again = await put(client, headers, e2e, "r1", {"valor": "3.00"})
        assert conforming(again, "put", 201) == first
        assert again.headers["Idempotent-Replayed"] == "true"
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 1


class TestProblems:
    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"valor": "1"}, "devolucao.valor"),
            ({"valor": "-1.00"}, "devolucao.valor"),
            ({}, "devolucao.valor"),
            ({"valor": "1.00", "natureza": "MED_FRAUDE"}, "devolucao.natureza"),
            ({"valor": "1.00", "descricao": "x" * 141}, "devolucao.descricao"),
        ],
    )
    async def test_a_body_out_of_the_schema(
        self, rt: Runtime, client: httpx.AsyncClient, body: dict[str, Any], field: str
    ) -> None:
        _, headers = await new_account(rt, client)
        e2e = await incoming(client, headers)
        refused = problem(
            await put(client, headers, e2e, "x1", body), "put", 400, "PixDevolucaoInvalida"
        )
        assert field in [v["propriedade"] for v in refused["violacoes"]], refused
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 0

    async def test_more_than_is_left(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        _, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "10.00")
        conforming(await put(client, headers, e2e, "p1", {"valor": "6.00"}), "put", 201)
        over = await put(client, headers, e2e, "p2", {"valor": "4.01"})
        assert "4.00" in problem(over, "put", 400, "PixDevolucaoInvalida")["detail"]

    async def test_an_id_used_with_another_body(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "10.00")
        conforming(await put(client, headers, e2e, "u1", {"valor": "1.00"}), "put", 201)
        reused = await put(client, headers, e2e, "u1", {"valor": "2.00"})
        problem(reused, "put", 400, "PixDevolucaoInvalida")

    async def test_past_the_deadline(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        now = datetime.now(UTC).replace(microsecond=0)
        rt.clock = FixedClock(now)
        _, headers = await new_account(rt, client)
        late = await incoming(
            client, headers, "10.00", paidAt=(now - timedelta(days=90)).isoformat()
        )
        refused = await put(client, headers, late, "t1", {"valor": "1.00"})
        problem(refused, "put", 400, "PixDevolucaoInvalida")

    async def test_a_short_balance(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        _, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "10.00")
        await send(rt, client, headers, "9.00")
        problem(
            await put(client, headers, e2e, "s1", {"valor": "2.00"}),
            "put",
            400,
            "PixDevolucaoInvalida",
        )

    async def test_not_found(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        _, owner = await new_account(rt, client)
        _, stranger = await new_account(rt, client)
        e2e = await incoming(client, owner, "10.00")
        conforming(await put(client, owner, e2e, "n1", {"valor": "1.00"}), "put", 201)
        problem(
            await put(client, stranger, e2e, "n2", {"valor": "1.00"}), "put", 404, "NaoEncontrado"
        )
        problem(await get(client, stranger, e2e, "n1"), "get", 404, "NaoEncontrado")
        problem(await get(client, owner, e2e, "nothere"), "get", 404, "NaoEncontrado")
        other = await incoming(client, owner, "10.00")
        problem(await get(client, owner, other, "n1"), "get", 404, "NaoEncontrado")
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 1


class TestScopes:
    async def test_put_needs_pix_write_and_get_pix_read(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "10.00")
        reader = await scoped(client, account, "pix.read")
        writer = await scoped(client, account, "pix.write")
        problem(await put(client, reader, e2e, "k1", {"valor": "1.00"}), "put", 403, "AcessoNegado")
        conforming(await put(client, writer, e2e, "k1", {"valor": "1.00"}), "put", 201)
        problem(await get(client, writer, e2e, "k1"), "get", 403, "AcessoNegado")
        conforming(await get(client, reader, e2e, "k1"), "get", 200)

    async def test_the_root_level_routes_need_them_too(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account, headers = await new_account(rt, client)
        e2e = await incoming(client, headers, "10.00")
        reader = await scoped(client, account, "pix.read")
        writer = await scoped(client, account, "pix.write")
        path = f"/pix/{e2e}/devolucao/k2"
        refused = await client.put(path, json={"valor": "1.00"}, headers=reader)
        assert refused.status_code == 403 and set(refused.json()) == SIMPLE_BODY
        made = await client.put(path, json={"valor": "1.00"}, headers=writer)
        assert made.status_code == 201, made.text
        refused = await client.get(path, headers=writer)
        assert refused.status_code == 403 and set(refused.json()) == SIMPLE_BODY
        assert (await client.get(path, headers=reader)).status_code == 200
