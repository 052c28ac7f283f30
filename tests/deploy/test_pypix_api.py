"""An unmodified Central Bank API Pix client, pypix-api (PyPI), pointed at pixgate through the
shipped nginx front (mutual TLS), as an integrator would: a bank of the library's kind whose URLs
are ours, the account's certificate and its client id and secret. Its cob, loc, pix, devolucao
and webhook calls run as the library makes them; each answer is one the library takes (its
models, its exceptions for the errors) and one the Central Bank's document allows
(tests/app/api_pix_document.py). The family is served under a base path of its own here
(`PIXGATE_API_PIX_BASE_PATH`), as a PSP's is.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import requests
from pypix_api import OAuth2Client, PixCobranca, StatusCob
from pypix_api.banks.base import BankPixAPIBase
from pypix_api.exceptions import PixAcessoNegadoException, PixRecursoNaoEncontradoException

from pixgate.accounts.rules.clients import AuthMethod
from pixgate.accounts.service import accounts
from pixgate.accounts.service.accounts import NewAccount
from pixgate.runtime import Runtime
from tests.app import api_pix_document as doc
from tests.deploy.front import Front, client, needs_nginx, nginx_front
from tests.helpers import make_account
from tests.processes import serving

pytestmark = needs_nginx

BASE_PATH = "/pix/v2"
"""Where this gateway serves the API Pix (`PIXGATE_API_PIX_BASE_PATH`), as Inter serves it."""
SCOPES = (
    "cob.write cob.read pix.write pix.read webhook.write webhook.read "
    "payloadlocation.write payloadlocation.read"
)
CPF = "52998224725"


class PixgatePixAPI(BankPixAPIBase):
    """pixgate as one of pypix-api's banks: its API's URL and its token URL."""

    def __init__(self, oauth: OAuth2Client, *, base_url: str, scopes: str = SCOPES) -> None:
        self.BASE_URL = base_url
        self.TOKEN_URL = oauth.token_url
        super().__init__(oauth, scopes=scopes)

    def get_bank_code(self) -> str:
        return "pixgate"

    def get_base_url(self) -> str:
        assert self.BASE_URL is not None
        return self.BASE_URL


@dataclass
class Recorded:
    """Every answer the library's session received, as it received it."""

    answers: list[requests.Response] = field(default_factory=list)

    def keep(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self.answers.append(response)

    def check_against_the_document(self) -> list[str]:
        """Each API Pix answer validated; the operations they answered, in order."""
        seen = []
        for answer in self.answers:
            path = urlsplit(answer.url).path
            if not path.startswith(BASE_PATH + "/"):
                continue
            method = str(answer.request.method)
            template = doc.template_of(method, path.removeprefix(BASE_PATH))
            as_httpx = httpx.Response(
                answer.status_code, headers=dict(answer.headers), content=answer.content
            )
            doc.assert_conforms(as_httpx, method, template)
            seen.append(f"{method} {template} {answer.status_code}")
        return seen


@pytest.fixture(scope="module")
def front(database_url: str) -> Iterator[Front]:
    """The front of tests/deploy/conftest.py, the family served under BASE_PATH, webhooks
    allowed to a loopback receiver (nothing is delivered to it here)."""
    with (
        serving(
            database_url, api_pix_base_path=BASE_PATH, allow_insecure_webhooks="true"
        ) as upstream,
        nginx_front(upstream) as running,
    ):
        yield running


def bank_for(
    account: NewAccount,
    front: Front,
    tmp_path: Path,
    scopes: str = SCOPES,
    credential: tuple[str, str | None] | None = None,
) -> tuple[PixgatePixAPI, Recorded]:
    """The library's bank for `account`: its certificate and key files (mTLS), its client id
    and secret (HTTP Basic at the token URL) or `credential`'s, nginx's CA trusted."""
    client_id, client_secret = credential or (account.client_id, account.client_secret)
    certificate, key = tmp_path / "client.crt", tmp_path / "client.key"
    certificate.write_text(account.certificate_pem)
    key.write_text(account.private_key_pem)
    key.chmod(0o600)
    oauth = OAuth2Client(
        token_url=f"{front.https}/oauth/token",
        client_id=client_id,
        client_secret=client_secret,
        cert=str(certificate),
        pvk=str(key),
    )
    # nginx's certificate is signed by the test's CA. requests lets REQUESTS_CA_BUNDLE (set on
    # many hosts) override a session's `verify` unless the session ignores the environment.
    oauth.session.verify = str(front.ca_file)
    oauth.session.trust_env = False
    recorded = Recorded()
    oauth.session.hooks["response"].append(recorded.keep)
    return PixgatePixAPI(oauth, base_url=front.https + BASE_PATH, scopes=scopes), recorded


def period() -> tuple[str, str]:
    now = datetime.now(UTC)
    return (
        (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def cob_body(account: NewAccount, valor: str = "37.00") -> dict[str, Any]:
    return {
        "calendario": {"expiracao": 3600},
        "devedor": {"cpf": CPF, "nome": "Fulano de Tal"},
        "valor": {"original": valor},
        "chave": account.pix_key,
        "solicitacaoPagador": "Serviço realizado.",
    }


def as_model(cob: dict[str, Any]) -> PixCobranca:
    """The library's model of a cob, each member read as the library reads it."""
    return PixCobranca(
        txid=cob["txid"],
        valor=float(cob["valor"]["original"]),
        status=StatusCob(cob["status"]).value,
        chave=cob["chave"],
    )


def charges(bank: PixgatePixAPI, account: NewAccount, txid: str) -> dict[str, Any]:
    """cob and loc through the library: created, revised, read, listed; a location made,
    read, listed and one cob's unlinked."""
    created = as_model(bank.criar_cob(txid, cob_body(account)))
    assert (created.txid, created.valor, created.status) == (txid, 37.0, "ATIVA")
    assert created.chave == account.pix_key
    other = bank.criar_cob_auto_txid(cob_body(account, "12.50"))
    assert as_model(other).valor == 12.5
    revised = bank.revisar_cob(txid, {"valor": {"original": "38.00"}})
    assert (revised["revisao"], as_model(revised).valor) == (1, 38.0)
    read = bank.consultar_cob(txid)
    assert as_model(read) == PixCobranca(txid, 38.0, "ATIVA", account.pix_key)
    inicio, fim = period()
    listed = bank.consultar_cobs(inicio, fim)
    assert {cob["txid"] for cob in listed["cobs"]} == {txid, other["txid"]}
    location = bank.criar_location("cob")
    assert bank.consultar_location(location["id"])["id"] == location["id"]
    assert location["id"] in {loc["id"] for loc in bank.listar_locations(inicio, fim)["loc"]}
    unlinked = bank.desvincular_txid_location(other["loc"]["id"])
    assert "txid" not in unlinked
    return read


def received(bank: PixgatePixAPI, e2eid: str) -> None:
    """pix and devolucao through the library."""
    inicio, fim = period()
    assert [pix["endToEndId"] for pix in bank.consultar_pix(inicio, fim)["pix"]] == [e2eid]
    assert bank.consultar_pix_por_e2eid(e2eid)["valor"] == "38.00"
    asked = bank.solicitar_devolucao_pix(e2eid, "D1", {"valor": "5.00"})
    assert (asked["id"], asked["valor"]) == ("D1", "5.00")
    assert bank.consultar_devolucao_pix(e2eid, "D1")["rtrId"] == asked["rtrId"]


def webhooks(bank: PixgatePixAPI, chave: str) -> None:
    """webhook through the library: registered, read, listed, removed."""
    url = "https://127.0.0.1:9/pix/webhook"
    bank.configurar_webhook(chave, url)
    assert bank.consultar_webhook(chave)["webhookUrl"] == url
    inicio, fim = period()
    assert [w["chave"] for w in bank.listar_webhooks(inicio, fim)["webhooks"]] == [chave]
    assert bank.excluir_webhook(chave) is True
    with pytest.raises(PixRecursoNaoEncontradoException):
        bank.consultar_webhook(chave)


async def pay(front: Front, account: NewAccount, tmp_path: Path, code: str) -> str:
    """A payer pays the cob's code (the sandbox, through the same front): its endToEndId."""
    async with client(front, account, tmp_path) as http:
        token = await http.post(
            "/api/auth/token",
            json={"clientId": account.client_id, "clientSecret": account.client_secret},
        )
        assert token.status_code == 201, token.text
        paid = await http.post(
            "/sandbox/pix/pay",
            headers={"Authorization": f"Bearer {token.json()['access_token']}"},
            json={"pixCode": code, "payer": {"name": "Pagador", "document": CPF}},
        )
    assert paid.status_code == 201, paid.text
    return str(paid.json()["endToEndId"])


async def test_the_library_runs_cob_loc_pix_devolucao_and_webhook_through_nginx(
    rt: Runtime, front: Front, tmp_path: Path
) -> None:
    account = await make_account(rt, name="Padaria São João")
    bank, recorded = bank_for(account, front, tmp_path)
    txid = uuid.uuid4().hex
    cob = await asyncio.to_thread(charges, bank, account, txid)
    e2eid = await pay(front, account, tmp_path, cob["pixCopiaECola"])
    await asyncio.to_thread(received, bank, e2eid)
    await asyncio.to_thread(webhooks, bank, account.pix_key)

    token = recorded.answers[0]
    assert token.url == f"{front.https}/oauth/token" and token.status_code == 200
    assert set(SCOPES.split()) <= set(token.json()["scope"].split())
    assert [answer.url for answer in recorded.answers].count(token.url) == 1, "one token"
    assert recorded.check_against_the_document() == [
        "PUT /cob/{txid} 201",
        "POST /cob 201",
        "PATCH /cob/{txid} 200",
        "GET /cob/{txid} 200",
        "GET /cob 200",
        "POST /loc 201",
        "GET /loc/{id} 200",
        "GET /loc 200",
        "DELETE /loc/{id}/txid 200",
        "GET /pix 200",
        "GET /pix/{e2eid} 200",
        "PUT /pix/{e2eid}/devolucao/{id} 201",
        "GET /pix/{e2eid}/devolucao/{id} 200",
        "PUT /webhook/{chave} 200",
        "GET /webhook/{chave} 200",
        "GET /webhook 200",
        "DELETE /webhook/{chave} 204",
        "GET /webhook/{chave} 404",
    ]


async def test_the_library_gets_the_documents_errors(
    rt: Runtime, front: Front, tmp_path: Path
) -> None:
    """A cob that does not exist is the library's not-found; a token without cob.write, its
    access denied; both answers are problems the document allows."""
    account = await make_account(rt)
    bank, recorded = bank_for(account, front, tmp_path, scopes="cob.read")

    def refused() -> None:
        with pytest.raises(PixRecursoNaoEncontradoException) as missing:
            bank.consultar_cob(uuid.uuid4().hex)
        assert missing.value.status == 404
        with pytest.raises(PixAcessoNegadoException) as denied:
            bank.criar_cob(uuid.uuid4().hex, cob_body(account))
        assert denied.value.status == 403
        assert denied.value.type == doc.ERROR_TYPE_BASE + "AcessoNegado"

    await asyncio.to_thread(refused)
    assert recorded.check_against_the_document() == ["GET /cob/{txid} 404", "PUT /cob/{txid} 403"]


async def test_a_certificate_only_credential_gets_its_token_as_the_library_asks(
    rt: Runtime, front: Front, tmp_path: Path
) -> None:
    """Without a secret the library sends `client_id` in the form and lets the TLS client
    certificate authenticate it (as Banco do Brasil and Sicoob are called): a `tls_client_auth`
    credential of pixgate works so."""
    account = await make_account(rt)
    credential = await accounts.create_credential(
        rt, account.account_id, method=AuthMethod.TLS_CLIENT_AUTH
    )
    assert credential.client_secret is None
    bank, recorded = bank_for(account, front, tmp_path, credential=(credential.client_id, None))
    created = await asyncio.to_thread(bank.criar_cob_auto_txid, cob_body(account))
    assert as_model(created).status == "ATIVA"
    token = recorded.answers[0]
    assert token.status_code == 200
    assert "authorization" not in {name.lower() for name in token.request.headers}
    assert recorded.check_against_the_document() == ["POST /cob 201"]
