"""What the API Pix tests of received PIX and their refunds share: the base path, PIX
received through the sandbox (with or without a charge) and tokens narrowed to scopes."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from pixgate.accounts.service import accounts
from pixgate.runtime import Runtime
from tests.charges.test_cash_in import create_charge
from tests.helpers import bearer, cert_header, make_account

BASE = "/api/v2"
CPF = "52998224725"
CNPJ = "11222333000181"
PAYER = {"name": "Pagador Externo", "document": CPF}


async def new_account(
    rt: Runtime, client: httpx.AsyncClient
) -> tuple[accounts.NewAccount, dict[str, str]]:
    account = await make_account(rt)
    return account, await bearer(client, account)


async def scoped(
    client: httpx.AsyncClient, account: accounts.NewAccount, scope: str
) -> dict[str, str]:
    """Headers with a token granted only `scope` (the OAuth 2.0 form request)."""
    response = await client.post(
        "/oauth/token",
        content=httpx.QueryParams(
            {
                "grant_type": "client_credentials",
                "client_id": account.client_id,
                "client_secret": account.client_secret,
                "scope": scope,
            }
        ).__str__(),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "X-SSL-Client-Cert": cert_header(account.certificate_pem),
        },
    )
    assert response.status_code in (200, 201), response.text
    return {
        "Authorization": f"Bearer {response.json()['access_token']}",
        "X-SSL-Client-Cert": cert_header(account.certificate_pem),
    }


async def incoming(
    client: httpx.AsyncClient, headers: dict[str, str], value: str = "100.00", **extra: Any
) -> str:
    """A PIX received without a charge (sandbox): its end-to-end id."""
    body: dict[str, Any] = {"value": value, "payer": PAYER, **extra}
    response = await client.post("/sandbox/pix/incoming", json=body, headers=headers)
    assert response.status_code == 201, response.text
    end_to_end_id: str = response.json()["endToEndId"]
    return end_to_end_id


async def pay(client: httpx.AsyncClient, headers: dict[str, str], code: str, **extra: Any) -> str:
    """An outside payer pays a charge's code (sandbox): the end-to-end id."""
    response = await client.post(
        "/sandbox/pix/pay", json={"pixCode": code, "payer": PAYER, **extra}, headers=headers
    )
    assert response.status_code == 201, response.text
    end_to_end_id: str = response.json()["endToEndId"]
    return end_to_end_id


async def paid_cob(
    client: httpx.AsyncClient, headers: dict[str, str], chave: str, valor: str = "123.45"
) -> tuple[str, str]:
    """A cob of `valor` to `chave`, paid: its txid and the payment's end-to-end id."""
    txid = uuid.uuid4().hex
    response = await client.put(
        f"/cob/{txid}",
        json={"calendario": {"expiracao": 3600}, "valor": {"original": valor}, "chave": chave},
        headers=headers,
    )
    assert response.status_code == 201, response.text
    return txid, await pay(client, headers, response.json()["pixCopiaECola"])


async def paid_charge(client: httpx.AsyncClient, headers: dict[str, str]) -> str:
    """A cash-in charge, paid: the payment's end-to-end id."""
    charge = await create_charge(client, headers)
    return await pay(client, headers, charge["pixCode"])
