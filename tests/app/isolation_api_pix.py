"""The isolation sweep's rows for the Central Bank's API Pix (tests/app/test_isolation.py):
account B calls every route of `pixgate.routers.API_PIX_ROUTERS`, at its mounted path, with
account A's txid, location ids, end-to-end ids, devolucao id and PIX key."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.app.isolation_calls import Call, Check, Row
from tests.app.isolation_world import API_PIX, CPF, World

PROBLEM = "https://pix.bcb.gov.br/api/v2/error/"
COB = f"{API_PIX}/cob/{{txid}}"
LOC = f"{API_PIX}/loc/{{id}}"
PIX = f"{API_PIX}/pix/{{e2eid}}"
DEVOLUCAO = f"{API_PIX}/pix/{{e2eid}}/devolucao/{{id}}"
WEBHOOK = f"{API_PIX}/webhook/{{chave}}"
B_TXID = "betaapipix" + "0" * 20


def problem(code: int, name: str) -> Check:
    """The family's refusal: an RFC 7807 problem of the document's type `name`."""

    async def check(world: World, response: httpx.Response) -> None:
        assert response.status_code == code, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["type"] == PROBLEM + name, response.text

    return check


NOT_FOUND = problem(404, "NaoEncontrado")


def empty_list(items: str) -> Check:
    """A list of the family holding none of A's objects (B has none of its own)."""

    async def check(world: World, response: httpx.Response) -> None:
        assert response.status_code == 200, response.text
        body = response.json()
        assert body[items] == [], body
        assert body["parametros"]["paginacao"]["quantidadeTotalDeItens"] == 0, body

    return check


async def _location_owner(world: World, location_id: Any) -> int:
    async with world.rt.db.connection() as conn:
        owner: int = await conn.fetchval(
            "SELECT account_id FROM locations WHERE id = $1", int(location_id)
        )
    return owner


async def own_api_cob(world: World, response: httpx.Response) -> None:
    """B's own cob under A's txid (txids are unique per receiving account)."""
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["txid"] == world.api["txid"] and body["revisao"] == 0
    assert body["chave"] == world.b.pix_key
    assert await _location_owner(world, body["loc"]["id"]) == world.b.account_id


async def own_location(world: World, response: httpx.Response) -> None:
    assert response.status_code == 201, response.text
    assert await _location_owner(world, response.json()["id"]) == world.b.account_id


def window(**filters: Callable[[World], str]) -> Callable[[World], Call]:
    """A list's required period (around now, so A's objects fall in it) and filters."""

    def fill(world: World) -> Call:
        now = datetime.now(UTC)
        period = {
            "inicio": (now - timedelta(days=1)).isoformat(),
            "fim": (now + timedelta(days=1)).isoformat(),
        }
        return Call(query={**period, **{k: f(world) for k, f in filters.items()}})

    return fill


def cob_of(chave: Callable[[World], str], txid: str | None = None) -> Callable[[World], Call]:
    def fill(world: World) -> Call:
        return Call(
            params={"txid": txid or world.api["txid"]},
            json={
                "calendario": {"expiracao": 600},
                "valor": {"original": "1.07"},
                "chave": chave(world),
            },
        )

    return fill


def txid(value: Callable[[World], str], **query: str) -> Callable[[World], Call]:
    return lambda w: Call(params={"txid": value(w)}, query=query or None)


def loc(role: str) -> Callable[[World], Call]:
    return lambda w: Call(params={"id": str(w.api[role])})


def received(role: str) -> Callable[[World], Call]:
    return lambda w: Call(params={"e2eid": w.tx[role]["end_to_end_id"]})


def devolucao(refund_id: Callable[[World], str], *, body: bool = False) -> Callable[[World], Call]:
    return lambda w: Call(
        params={"e2eid": w.tx["incoming"]["end_to_end_id"], "id": refund_id(w)},
        json={"valor": "0.50"} if body else None,
    )


def a_key(*, body: bool = False) -> Callable[[World], Call]:
    return lambda w: Call(
        params={"chave": w.key}, json={"webhookUrl": w.receiver.url("/beta")} if body else None
    )


def a_api_txid(world: World) -> str:
    value: str = world.api["txid"]
    return value


def a_refund_id(world: World) -> str:
    value: str = world.tx["refund"]["external_id"]
    return value


API_PIX_ROWS: list[Row] = [
    # cob: txids are unique per receiving account; A's key is no chave of B's
    Row("api-cob-get-a-txid", "GET", COB, txid(a_api_txid), NOT_FOUND),
    Row("api-cob-get-a-revision", "GET", COB, txid(a_api_txid, revisao="0"), NOT_FOUND),
    Row("api-cob-get-a-root-txid", "GET", COB, txid(lambda w: w.cob_txid), NOT_FOUND),
    Row(
        "api-cob-patch-a-txid",
        "PATCH",
        COB,
        lambda w: Call(params={"txid": w.api["txid"]}, json={"valor": {"original": "1.08"}}),
        NOT_FOUND,
    ),
    Row(
        "api-cob-cancel-a-txid",
        "PATCH",
        COB,
        lambda w: Call(
            params={"txid": w.api["txid"]}, json={"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
        ),
        NOT_FOUND,
    ),
    Row(
        "api-cob-cancel-a-root-txid",
        "PATCH",
        COB,
        lambda w: Call(
            params={"txid": w.cob_txid}, json={"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
        ),
        NOT_FOUND,
    ),
    Row("api-cob-put-a-txid", "PUT", COB, cob_of(lambda w: w.b.pix_key), own_api_cob),
    Row(
        "api-cob-put-a-key",
        "PUT",
        COB,
        cob_of(lambda w: w.key, B_TXID),
        problem(400, "CobOperacaoInvalida"),
    ),
    Row(
        "api-cob-post-a-key",
        "POST",
        f"{API_PIX}/cob",
        lambda w: Call(json=cob_of(lambda v: v.key)(w).json),
        problem(400, "CobOperacaoInvalida"),
    ),
    Row("api-cob-list", "GET", f"{API_PIX}/cob", window(), empty_list("cobs")),
    Row(
        "api-cob-list-a-cpf",
        "GET",
        f"{API_PIX}/cob",
        window(cpf=lambda w: CPF, locationPresente=lambda w: "true"),
        empty_list("cobs"),
    ),
    # loc: ids are A's whether free, serving A's API Pix cob or A's root-level cob
    Row("api-loc-get-a-free-id", "GET", LOC, loc("loc"), NOT_FOUND),
    Row("api-loc-get-a-cob-id", "GET", LOC, loc("cob_loc"), NOT_FOUND),
    Row("api-loc-get-a-root-cob-id", "GET", LOC, loc("root_loc"), NOT_FOUND),
    Row("api-loc-unlink-a-cob-id", "DELETE", f"{LOC}/txid", loc("cob_loc"), NOT_FOUND),
    Row("api-loc-unlink-a-root-cob-id", "DELETE", f"{LOC}/txid", loc("root_loc"), NOT_FOUND),
    Row("api-loc-unlink-a-free-id", "DELETE", f"{LOC}/txid", loc("loc"), NOT_FOUND),
    Row("api-loc-qrcode-a-cob-id", "GET", f"{LOC}/qrcode", loc("cob_loc"), NOT_FOUND),
    Row("api-loc-qrcode-a-root-cob-id", "GET", f"{LOC}/qrcode", loc("root_loc"), NOT_FOUND),
    Row(
        "api-loc-create",
        "POST",
        f"{API_PIX}/loc",
        lambda w: Call(json={"tipoCob": "cob"}),
        own_location,
    ),
    Row("api-loc-list", "GET", f"{API_PIX}/loc", window(), empty_list("loc")),
    Row(
        "api-loc-list-with-cob",
        "GET",
        f"{API_PIX}/loc",
        window(txIdPresente=lambda w: "true"),
        empty_list("loc"),
    ),
    # pix: PIX received by A (a PIX without a charge, a paid charge) and one A sent
    Row("api-pix-get-a-received", "GET", PIX, received("incoming"), NOT_FOUND),
    Row("api-pix-get-a-paid-charge", "GET", PIX, received("paid"), NOT_FOUND),
    Row("api-pix-get-a-sent", "GET", PIX, received("cash_out"), NOT_FOUND),
    Row("api-pix-list", "GET", f"{API_PIX}/pix", window(), empty_list("pix")),
    Row(
        "api-pix-list-a-txid",
        "GET",
        f"{API_PIX}/pix",
        window(txid=lambda w: w.charge["paid"]["txid"], cpf=lambda w: CPF),
        empty_list("pix"),
    ),
    Row(
        "api-pix-list-with-devolucao",
        "GET",
        f"{API_PIX}/pix",
        window(devolucaoPresente=lambda w: "true"),
        empty_list("pix"),
    ),
    # devolucao: of A's PIX received, under a new id and under A's own refund's id
    Row(
        "api-devolucao-put-a-e2e",
        "PUT",
        DEVOLUCAO,
        devolucao(lambda w: "betadevapipix", body=True),
        NOT_FOUND,
    ),
    Row("api-devolucao-put-a-id", "PUT", DEVOLUCAO, devolucao(a_refund_id, body=True), NOT_FOUND),
    Row("api-devolucao-get-a-id", "GET", DEVOLUCAO, devolucao(a_refund_id), NOT_FOUND),
    # webhook: A's key is no key of B's, registering on it is the documented refusal
    Row(
        "api-webhook-put-a-key",
        "PUT",
        WEBHOOK,
        a_key(body=True),
        problem(400, "WebhookOperacaoInvalida"),
    ),
    Row("api-webhook-get-a-key", "GET", WEBHOOK, a_key(), NOT_FOUND),
    Row("api-webhook-delete-a-key", "DELETE", WEBHOOK, a_key(), NOT_FOUND),
    Row(
        "api-webhook-list",
        "GET",
        f"{API_PIX}/webhook",
        lambda w: Call(),
        empty_list("webhooks"),
    ),
]
