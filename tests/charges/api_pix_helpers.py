"""What the API Pix tests of cob and loc share: accounts with their PIX key, tokens narrowed to
scopes, a cob body of the document, and problem checks."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import jwt

from pixgate.accounts.public import Scope, auth
from pixgate.accounts.service.accounts import NewAccount
from pixgate.core.pix import brcode
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime
from tests.helpers import bearer, cert_header, make_account

BASE = Settings.model_fields["api_pix_base_path"].default
PROBLEM = "https://pix.bcb.gov.br/api/v2/error/"
CPF = "52998224725"
CNPJ = "11222333000181"


@dataclass(frozen=True)
class Receiver:
    """An account, its key, and a token holding every scope."""

    account: NewAccount
    headers: dict[str, str]

    @property
    def key(self) -> str:
        return self.account.pix_key


async def receiver(rt: Runtime, client: httpx.AsyncClient, name: str = "Loja Pix") -> Receiver:
    account = await make_account(rt, name=name)
    return Receiver(account, await bearer(client, account))


async def scoped(rt: Runtime, account: NewAccount, *scopes: Scope) -> dict[str, str]:
    """Headers of a token that holds only `scopes` (what a form token request narrows to)."""
    certificate = cert_header(account.certificate_pem)
    token = await auth.issue_token(
        rt,
        auth.read_certificate(certificate),
        uuid.UUID(account.client_id),
        account.client_secret,
        scopes=frozenset(scopes),
    )
    return {"Authorization": f"Bearer {token.access_token}", "X-SSL-Client-Cert": certificate}


def cob_body(key: str, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "calendario": {"expiracao": 3600},
        "devedor": {"cpf": CPF, "nome": "Fulano de Tal"},
        "valor": {"original": "37.00"},
        "chave": key,
        "solicitacaoPagador": "Serviço realizado.",
        "infoAdicionais": [{"nome": "Campo 1", "valor": "Informação"}],
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not None}


def new_txid() -> str:
    return uuid.uuid4().hex  # 32 letters and digits


def assert_problem(response: httpx.Response, status: int, name: str) -> dict[str, Any]:
    """An RFC 7807 problem of the document's type `name`."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["type"] == PROBLEM + name
    assert body["status"] == status and body["title"] and body["detail"]
    return body


def token_of(location: str) -> str:
    """The token of a location URL (`host/qr/v2/<token>`)."""
    return location.rsplit("/", 1)[-1]


def location_of(pix_code: str) -> str:
    url = brcode.decode(pix_code).location_url
    assert url is not None
    return url


async def payload_at(client: httpx.AsyncClient, location: str) -> dict[str, Any]:
    """The JWS the location serves, verified with the key its header names."""
    response = await client.get(f"/qr/v2/{token_of(location)}")
    assert response.status_code == 200, response.text
    header = jwt.get_unverified_header(response.text)
    jwks = (await client.get("/.well-known/pix-jwks.json")).json()
    key = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
    claims: dict[str, Any] = jwt.decode(response.text, jwt.PyJWK(key).key, algorithms=["PS256"])
    return claims


def window(**params: Any) -> dict[str, Any]:
    """`inicio`/`fim` around now (an hour either side), plus `params`."""
    now = datetime.now(UTC)
    return {
        "inicio": (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
        "fim": (now + timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
        **params,
    }
