"""Builders tests share: accounts made through the service, tokens through HTTP."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import quote

import httpx

from pixgate.runtime import Runtime
from pixgate.services import accounts


def cert_header(pem: str) -> str:
    """What nginx's $ssl_client_escaped_cert sends: RFC 3986 percent-encoding."""
    return quote(pem, safe="")


async def make_account(
    rt: Runtime,
    *,
    name: str = "Loja Teste",
    balance: Decimal | str = "0",
    document: str | None = None,
) -> accounts.NewAccount:
    return await accounts.create(rt, name=name, balance=balance, document=document)


async def bearer(client: httpx.AsyncClient, account: accounts.NewAccount) -> dict[str, str]:
    """Headers of an authenticated request for `account`."""
    response = await client.post(
        "/api/auth/token",
        json={"clientId": account.client_id, "clientSecret": account.client_secret},
        headers={"X-SSL-Client-Cert": cert_header(account.certificate_pem)},
    )
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}
