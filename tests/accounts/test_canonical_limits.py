"""Sign-in and token limits count a credential however its clientId is spelled, against a
real `pixgate serve` (client addresses as the nginx front sends them, in X-Forwarded-For).

`uuid.UUID` reads one id as `urn:uuid:...`, `{...}`, without hyphens, in upper case: the
dashboard's limit used to key on the text as typed, so each spelling had fresh attempts
after a lockout, and the right secret then signed in.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx

from pixgate.runtime import Runtime
from tests.dashboard.conftest import csrf_of
from tests.helpers import cert_header, make_account
from tests.processes import serving

LIMIT = 3


def spellings(client_id: str) -> list[str]:
    """`client_id` as `uuid.UUID` also reads it."""
    bare = client_id.replace("-", "")
    return [
        f"urn:uuid:{client_id}",
        f"{{{client_id}}}",
        bare,
        client_id.upper(),
        f"uuid:{{{bare.upper()}}}",
        "".join(c.upper() if i % 2 else c for i, c in enumerate(client_id)),
    ]


async def sign_in(
    http: httpx.AsyncClient, client_id: str, secret: str, address: str
) -> httpx.Response:
    """The sign-in form, fetched and posted from `address`."""
    forwarded = {"X-Forwarded-For": address}
    csrf = csrf_of(await http.get("/dashboard/login", headers=forwarded))
    return await http.post(
        "/dashboard/login",
        data={"clientId": client_id, "clientSecret": secret, "csrf": csrf},
        headers=forwarded,
    )


def assert_locked(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert "Too many failed sign-ins" in response.text
    assert "pixgate_session=" not in response.headers.get("set-cookie", "")


async def test_every_spelling_of_a_locked_clientid_stays_locked(
    rt: Runtime, database_url: str
) -> None:
    account = await make_account(rt)
    other = await make_account(rt, name="Outra Loja")
    with serving(database_url, dashboard_login_rate_limit=f"{LIMIT}/minute") as base:
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            for n in range(LIMIT):
                failed = await sign_in(http, account.client_id, "wrong", f"10.0.0.{n}")
                assert failed.status_code == 401, failed.text
            for n, spelled in enumerate([account.client_id, *spellings(account.client_id)]):
                # a fresh address each time: only the clientId's counter can refuse it
                assert_locked(await sign_in(http, spelled, account.client_secret, f"10.1.0.{n}"))
            signed = await sign_in(http, other.client_id, other.client_secret, "10.2.0.1")
            assert signed.status_code == 303, "the lock is the credential's, not everyone's"


async def test_clientids_that_name_no_credential_share_one_counter(
    rt: Runtime, database_url: str
) -> None:
    account = await make_account(rt)
    garbage = ["nope", "", "urn:uuid:zz", account.client_id + "0", "{" * 40]
    with serving(database_url, dashboard_login_rate_limit=f"{LIMIT}/minute") as base:
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            for n, text in enumerate(garbage[:LIMIT]):
                failed = await sign_in(http, text, "wrong", f"10.3.0.{n}")
                assert failed.status_code == 401, failed.text
            for n, text in enumerate(garbage):
                assert_locked(await sign_in(http, text, "wrong", f"10.4.0.{n}"))
            signed = await sign_in(http, account.client_id, account.client_secret, "10.5.0.1")
            assert signed.status_code == 303


def encodings(pem: str) -> list[str]:
    """The one certificate's header as a front may percent-encode it."""
    escaped = cert_header(pem)
    return [
        escaped,
        re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), escaped),
        quote(pem, safe="/=-"),
    ]


async def test_token_attempts_share_one_counter_however_spelled(
    rt: Runtime, database_url: str
) -> None:
    """The token limit keys on the certificate's fingerprint (SHA-256 of its DER bytes), which
    no spelling of the header or of the clientId changes."""
    account = await make_account(rt)
    headers = encodings(account.certificate_pem)
    with serving(database_url, token_rate_limit=f"{LIMIT}/minute") as base:
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            for n in range(LIMIT):
                issued = await http.post(
                    "/api/auth/token",
                    json={"clientId": account.client_id, "clientSecret": account.client_secret},
                    headers={"X-SSL-Client-Cert": headers[n % len(headers)]},
                )
                assert issued.status_code == 201, issued.text
            for spelled in [account.client_id, *spellings(account.client_id), "nope"]:
                for header in headers:
                    refused = await http.post(
                        "/api/auth/token",
                        json={"clientId": spelled, "clientSecret": account.client_secret},
                        headers={"X-SSL-Client-Cert": header, "X-Forwarded-For": "10.6.0.1"},
                    )
                    assert refused.status_code == 429, (spelled, refused.text)
                    assert refused.json()["code"] == "RATE_LIMITED"
