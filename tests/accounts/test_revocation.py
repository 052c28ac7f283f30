"""Revoking a credential or a certificate ends the tokens already issued to it, within
5 seconds, in every API process: two real `pixgate serve` processes, the revocation made
by the CLI as an operator would."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

import httpx
import pytest

from pixgate.accounts.service import accounts, auth
from pixgate.runtime import Runtime
from tests.helpers import bearer, cert_header, make_account
from tests.processes import PIXGATE, serving_many

BOUND_SECONDS = 5.0


async def _issue(
    http: httpx.AsyncClient, base: str, account: accounts.NewAccount
) -> httpx.Response:
    return await http.post(
        f"{base}/api/auth/token",
        headers={"X-SSL-Client-Cert": cert_header(account.certificate_pem)},
        json={"clientId": account.client_id, "clientSecret": account.client_secret},
    )


async def _token_headers(
    http: httpx.AsyncClient, base: str, account: accounts.NewAccount
) -> dict[str, str]:
    response = await _issue(http, base, account)
    assert response.status_code == 201, response.text
    return {
        "Authorization": f"Bearer {response.json()['access_token']}",
        "X-SSL-Client-Cert": cert_header(account.certificate_pem),
    }


def _cli(database_url: str, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    env["PIXGATE_DATABASE_URL"] = database_url
    subprocess.run([PIXGATE, *args], env=env, check=True, capture_output=True)


async def _seconds_until_refused(
    http: httpx.AsyncClient, bases: list[str], headers: dict[str, str]
) -> float:
    """How long until every process answers 401 to `headers` (asserts it is within bound)."""
    started = time.monotonic()
    waiting = set(bases)
    while waiting and time.monotonic() - started < BOUND_SECONDS:
        for base in list(waiting):
            response = await http.get(f"{base}/accounts/balances", headers=headers)
            if response.status_code == 401:
                assert response.json()["message"] == "token was revoked"
                waiting.discard(base)
            else:
                assert response.status_code == 200, response.text
        await asyncio.sleep(0.1)
    assert not waiting, f"still accepted after {BOUND_SECONDS} s by {sorted(waiting)}"
    return time.monotonic() - started


@pytest.mark.parametrize("what", ["credentials", "certs"])
async def test_revocation_ends_issued_tokens_in_every_process(
    rt: Runtime, database_url: str, what: str
) -> None:
    victim, bystander = await make_account(rt), await make_account(rt, name="Outra")
    with serving_many(2, database_url) as bases:
        async with httpx.AsyncClient(timeout=5) as http:
            stolen = await _token_headers(http, bases[0], victim)
            unrelated = await _token_headers(http, bases[1], bystander)
            for base in bases:
                assert (await http.get(f"{base}/accounts/balances", headers=stolen)).is_success

            target = victim.client_id if what == "credentials" else victim.certificate_fingerprint
            _cli(database_url, what, "revoke", target)
            elapsed = await _seconds_until_refused(http, bases, stolen)
            print(f"revoked ({what}): refused by both processes after {elapsed:.2f} s")

            for base in bases:
                still = await http.get(f"{base}/accounts/balances", headers=unrelated)
                assert still.status_code == 200, "another account's token must keep working"
            assert (await _issue(http, bases[1], victim)).status_code == 401


async def test_refresh_applies_to_this_process(rt: Runtime, client: httpx.AsyncClient) -> None:
    """The check itself, without processes: a refreshed list refuses the revoked token."""
    account = await make_account(rt)
    headers = await bearer(client, account)
    await accounts.revoke_credential(rt, account.client_id)
    assert (await client.get("/accounts/balances", headers=headers)).status_code == 200
    await auth.refresh_revocations(rt)
    refused = await client.get("/accounts/balances", headers=headers)
    assert refused.status_code == 401
    assert refused.json() == {
        "statusCode": 401,
        "message": "token was revoked",
        "error": "Unauthorized",
    }
