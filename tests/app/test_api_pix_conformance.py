"""Every operation of the Central Bank's API Pix that pixgate serves, checked against the
document itself (tests/app/api_pix_document.py): a success, a request without a token, one with a
token that lacks the operation's scope, and, where the operation has them, a request that fails
the schema (400) and one for something that does not exist (404). Each answer must be one the
document allows: a declared status, the declared media type, a body its schema accepts.

The operations are found from the app's routes (those under `PIXGATE_API_PIX_BASE_PATH`, and the
public payload under /qr/v2), so a route added to the family is checked here at once, and one
without scenarios below fails `test_every_served_operation_is_the_documents_and_has_scenarios`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.routing import iter_route_contexts

from pixgate.accounts.public import Scope
from pixgate.accounts.service.accounts import NewAccount
from pixgate.app import create_app
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime
from tests.app import api_pix_document as doc
from tests.helpers import cert_header, make_account

BASE = Settings.model_fields["api_pix_base_path"].default
PAYLOAD_PREFIX = "/qr/v2"
"""Where pixgate serves the document's public payload operations (`security: []`)."""
CPF = "52998224725"
WEBHOOK_URL = "https://127.0.0.1:9/pix"
"""A receiver on loopback (webhooks allowed there below); registering one delivers nothing."""
Operation = tuple[str, str]

EXTENSIONS: dict[Operation, str] = {
    ("GET", f"{BASE}/loc/{{id}}/qrcode"): "a location's BR Code and its image, as PSPs offer",
}
"""Routes under the base path that the document lacks, each with what it is for; any other
route there must be an operation of the document."""


# --- which operations the app serves ---------------------------------------------------------


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


@cache
def _public_paths() -> frozenset[str]:
    """The document's paths served to anyone (`security: []`): the payloads a QR code names."""
    return frozenset(
        path for method, path in doc.operations() if doc.operation(method, path)["security"] == []
    )


def _document_path(route_path: str) -> str | None:
    """The document's path template a route of ours serves, if any."""
    for _, path in doc.operations():
        prefix = PAYLOAD_PREFIX if path in _public_paths() else BASE
        if _shape(prefix + path) == _shape(route_path):
            return path
    return None


@cache
def served() -> list[Operation]:
    """(METHOD, document path) of every operation the app serves under the base path or as
    the public payload; a route under the base path the document lacks is kept as its own
    path, so the test below names it."""
    found: list[Operation] = []
    for route in iter_route_contexts(create_app(Settings()).routes):
        path = route.path_format
        if not (route.methods and path):
            continue
        if not (path.startswith(BASE + "/") or path.startswith(PAYLOAD_PREFIX + "/")):
            continue
        template = _document_path(path) or path
        found += [(method, template) for method in route.methods if method != "HEAD"]
    return sorted(set(found))


def _id(operation: Operation) -> str:
    return f"{operation[0]} {operation[1]}"


# --- the world a scenario runs in ------------------------------------------------------------


@dataclass
class World:
    rt: Runtime
    client: httpx.AsyncClient
    account: NewAccount
    auth: dict[str, str]
    """Every scope (a token of our spec's JSON request) and the bound certificate."""

    @property
    def certificate(self) -> dict[str, str]:
        return {"X-SSL-Client-Cert": cert_header(self.account.certificate_pem)}

    async def call(
        self, method: str, path: str, auth: dict[str, str], **options: Any
    ) -> httpx.Response:
        return await self.client.request(method, BASE + path, headers=auth, **options)

    async def token(self, scopes: list[str]) -> dict[str, str]:
        """Headers with a token of exactly `scopes`, asked for as a Central Bank client asks
        (RFC 6749 4.4, form-encoded, HTTP Basic)."""
        response = await self.client.post(
            "/oauth/token",
            data={"grant_type": "client_credentials", "scope": " ".join(scopes)},
            auth=(self.account.client_id, self.account.client_secret),
            headers=self.certificate,
        )
        assert response.status_code in (200, 201), response.text
        return {"Authorization": f"Bearer {response.json()['access_token']}", **self.certificate}

    async def cob(self, **changes: Any) -> dict[str, Any]:
        """A cob made through the family (PUT /cob/{txid})."""
        txid = uuid.uuid4().hex
        response = await self.call("PUT", f"/cob/{txid}", self.auth, json=cob_body(self, **changes))
        assert response.status_code == 201, response.text
        created: dict[str, Any] = response.json()
        return created

    async def location(self) -> dict[str, Any]:
        response = await self.call("POST", "/loc", self.auth, json={"tipoCob": "cob"})
        assert response.status_code == 201, response.text
        made: dict[str, Any] = response.json()
        return made

    async def received(self) -> str:
        """The endToEndId of a PIX this account received, paying one of its cobs."""
        cob = await self.cob()
        paid = await self.client.post(
            "/sandbox/pix/pay",
            headers=self.auth,
            json={"pixCode": cob["pixCopiaECola"], "payer": {"name": "Pagador", "document": CPF}},
        )
        assert paid.status_code == 201, paid.text
        return str(paid.json()["endToEndId"])

    async def webhook(self) -> None:
        url = WEBHOOK_URL
        body = {"webhookUrl": url}
        response = await self.call("PUT", f"/webhook/{self.account.pix_key}", self.auth, json=body)
        assert response.status_code == 200, response.text


def cob_body(world: World, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "calendario": {"expiracao": 3600},
        "devedor": {"cpf": CPF, "nome": "Fulano de Tal"},
        "valor": {"original": "37.00"},
        "chave": world.account.pix_key,
        "solicitacaoPagador": "Serviço realizado.",
    }
    return body | changes


def period() -> dict[str, str]:
    now = datetime.now(UTC)
    return {
        "inicio": (now - timedelta(days=1)).isoformat().replace("+00:00", "Z"),
        "fim": (now + timedelta(days=1)).isoformat().replace("+00:00", "Z"),
    }


def unknown_txid() -> str:
    return uuid.uuid4().hex


def unknown_e2eid() -> str:
    return "E" + "12345678" + "202611251200" + uuid.uuid4().hex[:11]


Call = Callable[[World, dict[str, str]], Awaitable[httpx.Response]]


@dataclass(frozen=True)
class Case:
    """The requests that drive one operation: `success` must succeed; `invalid` fails the
    schema (400); `missing` names what does not exist (404). Each takes the headers to send."""

    success: Call
    invalid: Call | None = None
    missing: Call | None = None


# --- cob ---------------------------------------------------------------------------------------


async def put_cob(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("PUT", f"/cob/{unknown_txid()}", auth, json=cob_body(w))


async def put_cob_invalid(w: World, auth: dict[str, str]) -> httpx.Response:
    body = cob_body(w, valor={"original": "37,00"})
    return await w.call("PUT", f"/cob/{unknown_txid()}", auth, json=body)


async def post_cob(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("POST", "/cob", auth, json=cob_body(w))


async def post_cob_invalid(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("POST", "/cob", auth, json=cob_body(w, calendario={"expiracao": "1h"}))


async def get_cob(w: World, auth: dict[str, str]) -> httpx.Response:
    cob = await w.cob()
    return await w.call("GET", f"/cob/{cob['txid']}", auth)


async def get_cob_missing(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("GET", f"/cob/{unknown_txid()}", auth)


async def patch_cob(w: World, auth: dict[str, str]) -> httpx.Response:
    cob = await w.cob()
    return await w.call("PATCH", f"/cob/{cob['txid']}", auth, json={"valor": {"original": "38.00"}})


async def patch_cob_invalid(w: World, auth: dict[str, str]) -> httpx.Response:
    cob = await w.cob()
    return await w.call("PATCH", f"/cob/{cob['txid']}", auth, json={"status": "PAGA"})


async def patch_cob_missing(w: World, auth: dict[str, str]) -> httpx.Response:
    body = {"valor": {"original": "38.00"}}
    return await w.call("PATCH", f"/cob/{unknown_txid()}", auth, json=body)


async def list_cobs(w: World, auth: dict[str, str]) -> httpx.Response:
    await w.cob()
    return await w.call("GET", "/cob", auth, params=period())


async def list_invalid(path: str, w: World, auth: dict[str, str]) -> httpx.Response:
    """A list query without its required `fim`."""
    return await w.call("GET", path, auth, params={"inicio": period()["inicio"]})


# --- loc ---------------------------------------------------------------------------------------


async def post_loc(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("POST", "/loc", auth, json={"tipoCob": "cob"})


async def post_loc_invalid(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("POST", "/loc", auth, json={"tipoCob": "boleto"})


async def list_locs(w: World, auth: dict[str, str]) -> httpx.Response:
    await w.location()
    return await w.call("GET", "/loc", auth, params=period())


async def get_loc(w: World, auth: dict[str, str]) -> httpx.Response:
    loc = await w.location()
    return await w.call("GET", f"/loc/{loc['id']}", auth)


async def get_loc_missing(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("GET", "/loc/987654321", auth)


async def unlink_loc(w: World, auth: dict[str, str]) -> httpx.Response:
    cob = await w.cob()
    return await w.call("DELETE", f"/loc/{cob['loc']['id']}/txid", auth)


async def unlink_loc_missing(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("DELETE", "/loc/987654321/txid", auth)


# --- pix and devolucao ------------------------------------------------------------------------


async def get_pix(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("GET", f"/pix/{await w.received()}", auth)


async def get_pix_missing(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("GET", f"/pix/{unknown_e2eid()}", auth)


async def list_pix(w: World, auth: dict[str, str]) -> httpx.Response:
    await w.received()
    return await w.call("GET", "/pix", auth, params=period())


async def put_devolucao(w: World, auth: dict[str, str]) -> httpx.Response:
    e2eid = await w.received()
    body = {"valor": "7.00"}
    return await w.call("PUT", f"/pix/{e2eid}/devolucao/D1", auth, json=body)


async def put_devolucao_invalid(w: World, auth: dict[str, str]) -> httpx.Response:
    e2eid = await w.received()
    body = {"valor": "sete"}
    return await w.call("PUT", f"/pix/{e2eid}/devolucao/D1", auth, json=body)


async def put_devolucao_missing(w: World, auth: dict[str, str]) -> httpx.Response:
    body = {"valor": "7.00"}
    return await w.call("PUT", f"/pix/{unknown_e2eid()}/devolucao/D1", auth, json=body)


async def get_devolucao(w: World, auth: dict[str, str]) -> httpx.Response:
    e2eid = await w.received()
    made = await w.call("PUT", f"/pix/{e2eid}/devolucao/D1", w.auth, json={"valor": "7.00"})
    assert made.status_code == 201, made.text
    return await w.call("GET", f"/pix/{e2eid}/devolucao/D1", auth)


async def get_devolucao_missing(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.call("GET", f"/pix/{await w.received()}/devolucao/nenhuma", auth)


# --- webhook ----------------------------------------------------------------------------------


async def put_webhook(w: World, auth: dict[str, str]) -> httpx.Response:
    body = {"webhookUrl": WEBHOOK_URL}
    return await w.call("PUT", f"/webhook/{w.account.pix_key}", auth, json=body)


async def put_webhook_invalid(w: World, auth: dict[str, str]) -> httpx.Response:
    body = {"webhookUrl": "not a url"}
    return await w.call("PUT", f"/webhook/{w.account.pix_key}", auth, json=body)


async def get_webhook(w: World, auth: dict[str, str]) -> httpx.Response:
    await w.webhook()
    return await w.call("GET", f"/webhook/{w.account.pix_key}", auth)


async def webhook_missing(method: str, w: World, auth: dict[str, str]) -> httpx.Response:
    """The account's key with no webhook registered."""
    return await w.call(method, f"/webhook/{w.account.pix_key}", auth)


async def delete_webhook(w: World, auth: dict[str, str]) -> httpx.Response:
    await w.webhook()
    return await w.call("DELETE", f"/webhook/{w.account.pix_key}", auth)


async def list_webhooks(w: World, auth: dict[str, str]) -> httpx.Response:
    await w.webhook()
    return await w.call("GET", "/webhook", auth)


# --- the public payload ------------------------------------------------------------------------


async def get_payload(w: World, auth: dict[str, str]) -> httpx.Response:
    cob = await w.cob()
    path = urlsplit("https://" + cob["loc"]["location"]).path
    return await w.client.get(path, headers=auth)


async def get_payload_missing(w: World, auth: dict[str, str]) -> httpx.Response:
    return await w.client.get(f"{PAYLOAD_PREFIX}/{uuid.uuid4().hex}", headers=auth)


def _on(path: str, call: Callable[[str, World, dict[str, str]], Awaitable[httpx.Response]]) -> Call:
    async def bound(w: World, auth: dict[str, str]) -> httpx.Response:
        return await call(path, w, auth)

    return bound


CASES: dict[Operation, Case] = {
    ("PUT", "/cob/{txid}"): Case(put_cob, put_cob_invalid),
    ("GET", "/cob/{txid}"): Case(get_cob, missing=get_cob_missing),
    ("PATCH", "/cob/{txid}"): Case(patch_cob, patch_cob_invalid, patch_cob_missing),
    ("POST", "/cob"): Case(post_cob, post_cob_invalid),
    ("GET", "/cob"): Case(list_cobs, _on("/cob", list_invalid)),
    ("POST", "/loc"): Case(post_loc, post_loc_invalid),
    ("GET", "/loc"): Case(list_locs, _on("/loc", list_invalid)),
    ("GET", "/loc/{id}"): Case(get_loc, missing=get_loc_missing),
    ("DELETE", "/loc/{id}/txid"): Case(unlink_loc, missing=unlink_loc_missing),
    ("GET", "/pix/{e2eid}"): Case(get_pix, missing=get_pix_missing),
    ("GET", "/pix"): Case(list_pix, _on("/pix", list_invalid)),
    ("PUT", "/pix/{e2eid}/devolucao/{id}"): Case(
        put_devolucao, put_devolucao_invalid, put_devolucao_missing
    ),
    ("GET", "/pix/{e2eid}/devolucao/{id}"): Case(get_devolucao, missing=get_devolucao_missing),
    ("PUT", "/webhook/{chave}"): Case(put_webhook, put_webhook_invalid),
    ("GET", "/webhook/{chave}"): Case(get_webhook, missing=_on("GET", webhook_missing)),
    ("DELETE", "/webhook/{chave}"): Case(delete_webhook, missing=_on("DELETE", webhook_missing)),
    ("GET", "/webhook"): Case(list_webhooks),
    ("GET", "/{pixUrlAccessToken}"): Case(get_payload, missing=get_payload_missing),
}


@pytest.fixture
async def world(rt: Runtime, client: httpx.AsyncClient) -> World:
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    account = await make_account(rt, name="Padaria São João")
    certificate = {"X-SSL-Client-Cert": cert_header(account.certificate_pem)}
    response = await client.post(
        "/api/auth/token",
        json={"clientId": account.client_id, "clientSecret": account.client_secret},
        headers=certificate,
    )
    assert response.status_code == 201, response.text
    auth = {"Authorization": f"Bearer {response.json()['access_token']}", **certificate}
    return World(rt, client, account, auth)


def _with(kind: str) -> list[Operation]:
    return [op for op in served() if op in CASES and getattr(CASES[op], kind) is not None]


def _secured() -> list[Operation]:
    return [op for op in served() if op in CASES and doc.scopes(*op)]


# --- the checks --------------------------------------------------------------------------------


def test_every_served_operation_is_the_documents_and_has_scenarios() -> None:
    documented = set(doc.operations()) | set(EXTENSIONS)
    assert [op for op in served() if op not in documented] == [], "routes the document lacks"
    operations = [op for op in served() if op not in EXTENSIONS]
    assert [op for op in operations if op not in CASES] == [], "operations without scenarios"
    assert operations, "no operation of the API Pix is served"


def test_each_operation_declares_the_scope_pixgate_knows() -> None:
    """Every scope the served operations need is one a token can be granted."""
    needed = {scope for op in served() if op in CASES for scope in doc.scopes(*op)}
    assert needed <= {str(scope) for scope in Scope}


@pytest.mark.parametrize("operation", [op for op in served() if op in CASES], ids=_id)
async def test_success(operation: Operation, world: World) -> None:
    response = await CASES[operation].success(world, world.auth)
    assert 200 <= response.status_code < 300, response.text
    doc.assert_conforms(response, *operation)


@pytest.mark.parametrize("operation", _with("invalid"), ids=_id)
async def test_a_request_the_schema_refuses_is_400(operation: Operation, world: World) -> None:
    invalid = CASES[operation].invalid
    assert invalid is not None
    response = await invalid(world, world.auth)
    assert response.status_code == 400, response.text
    problem = doc.assert_conforms(response, *operation)
    assert problem["violacoes"], problem


@pytest.mark.parametrize("operation", _with("missing"), ids=_id)
async def test_what_does_not_exist_is_404(operation: Operation, world: World) -> None:
    missing = CASES[operation].missing
    assert missing is not None
    response = await missing(world, world.auth)
    assert response.status_code == 404, response.text
    doc.assert_conforms(response, *operation)


@pytest.mark.parametrize("operation", _secured(), ids=_id)
async def test_no_token_is_403(operation: Operation, world: World) -> None:
    response = await CASES[operation].success(world, world.certificate)
    assert response.status_code == 403, response.text
    problem = doc.assert_conforms(response, *operation)
    assert problem["type"] == doc.ERROR_TYPE_BASE + "AcessoNegado"


@pytest.mark.parametrize("operation", _secured(), ids=_id)
async def test_a_token_without_the_scope_is_403(operation: Operation, world: World) -> None:
    needed = set(doc.scopes(*operation))
    others = await world.token(sorted(str(s) for s in Scope if str(s) not in needed))
    response = await CASES[operation].success(world, others)
    assert response.status_code == 403, response.text
    problem = doc.assert_conforms(response, *operation)
    assert problem["type"] == doc.ERROR_TYPE_BASE + "AcessoNegado"


@pytest.mark.parametrize("extension", [op for op in served() if op in EXTENSIONS], ids=_id)
async def test_an_extension_answers_in_the_familys_problems(
    extension: Operation, world: World
) -> None:
    """A route beside the document is still of the family: its errors are problems."""
    method, path = extension
    concrete = re.sub(r"\{[^}]+\}", "987654321", path)
    for auth, status, kind in [
        (world.certificate, 403, "AcessoNegado"),
        (world.auth, 404, None),
    ]:
        response = await world.client.request(method, concrete, headers=auth)
        assert response.status_code == status, response.text
        assert response.headers["content-type"] == doc.PROBLEM
        problem = response.json()
        assert problem["status"] == status
        assert kind is None or problem["type"] == doc.ERROR_TYPE_BASE + kind


async def test_a_paid_cobs_payload_is_no_longer_served(world: World) -> None:
    """The document lets a PSP answer a payload it no longer serves with 404 or 410; pixgate
    answers the 404 its operation declares, as `CobPayloadNaoEncontrado`."""
    if ("GET", "/{pixUrlAccessToken}") not in served():
        pytest.skip("the public payload is not served")
    cob = await world.cob()
    paid = await world.client.post(
        "/sandbox/pix/pay",
        headers=world.auth,
        json={"pixCode": cob["pixCopiaECola"], "payer": {"name": "Pagador", "document": CPF}},
    )
    assert paid.status_code == 201, paid.text
    path = urlsplit("https://" + cob["loc"]["location"]).path
    response = await world.client.get(path)
    assert response.status_code == 404, response.text
    problem = doc.assert_conforms(response, "GET", "/{pixUrlAccessToken}")
    assert problem["type"] == doc.ERROR_TYPE_BASE + "CobPayloadNaoEncontrado"
