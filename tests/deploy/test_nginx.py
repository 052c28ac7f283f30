"""The shipped nginx front in front of a real `pixgate serve` (tests/deploy/front.py runs it),
over HTTP/1.1 and HTTP/2: the client certificate reaches pixgate only from the TLS handshake,
never from a header the client sends, and pixgate judges it (an expired one gets
PUB_CERT_EXPIRED, not nginx's page); a browser without a client certificate can use the
dashboard (its session cookie Secure) and the Swagger UI with its assets; TLS 1.2 and later
only; the forwarded headers are nginx's; plain HTTP redirects.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import http.client
import json
import re
import socket
import ssl
import warnings
from pathlib import Path
from typing import Any

import httpx
import pytest

from pixgate.accounts.rules import certificates
from pixgate.accounts.service import accounts
from pixgate.runtime import Runtime
from tests.dashboard.conftest import csrf_of
from tests.deploy.front import (
    CASH_OUT,
    DAY,
    ELSEWHERE,
    MAX_BODY_BYTES,
    OVER_THE_LIMIT,
    TOKEN,
    TOO_LARGE,
    Answer,
    Front,
    assert_nginx_answer,
    chunks,
    client,
    client_certificate,
    exchange,
    needs_nginx,
    tls_context,
)
from tests.helpers import cert_header, make_account

pytestmark = needs_nginx


def credentials(account: accounts.NewAccount) -> dict[str, str]:
    return {"clientId": account.client_id, "clientSecret": account.client_secret}


async def token(http: httpx.AsyncClient, account: accounts.NewAccount) -> str:
    response = await http.post(TOKEN, json=credentials(account))
    assert response.status_code == 201, response.text
    return str(response.json()["access_token"])


def raw_request(
    front: Front,
    context: ssl.SSLContext,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes = b"",
) -> tuple[int, Any]:
    """One request whose header lines go on the wire exactly as given: names in their case,
    repeated names repeated (http.client's putheader adds nothing and merges nothing)."""
    connection = http.client.HTTPSConnection(
        "127.0.0.1", front.tls_port, context=context, timeout=10
    )
    try:
        connection.putrequest(method, path)
        for name, value in headers:
            connection.putheader(name, value)
        if body:
            connection.putheader("Content-Type", "application/json")
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body or None)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


# --- the certificate reaches pixgate from the handshake only --------------------------------


async def test_token_and_request_with_the_client_certificate(
    rt: Runtime, front: Front, tmp_path: Path, protocol: str
) -> None:
    account = await make_account(rt, balance="250.00")
    async with client(front, account, tmp_path, protocol) as http:
        issued = await token(http, account)
        response = await http.get(
            "/accounts/balances", headers={"Authorization": f"Bearer {issued}"}
        )
    assert response.http_version == protocol
    assert response.status_code == 200, response.text
    assert response.json()["data"][0]["balanceAmount"]["available"] == 250


async def test_head_through_nginx_is_the_get_without_its_body(
    rt: Runtime, front: Front, tmp_path: Path, protocol: str
) -> None:
    """A monitor's HEAD probe, over HTTP/1.1 and HTTP/2: the GET's status and length."""
    account = await make_account(rt, balance="250.00")
    async with client(front, account, tmp_path, protocol) as http:
        signed_in = {"Authorization": f"Bearer {await token(http, account)}"}
        head = await http.head("/accounts/balances", headers=signed_in)
        got = await http.get("/accounts/balances", headers=signed_in)
        probe = await http.head("/healthz")
    assert head.http_version == protocol
    assert head.status_code == got.status_code == 200, head.text
    assert head.content == b""
    assert head.headers["content-length"] == str(len(got.content))
    assert probe.status_code == 200 and probe.content == b""


async def test_no_client_certificate_no_token(
    rt: Runtime, front: Front, tmp_path: Path, protocol: str
) -> None:
    account = await make_account(rt)
    async with client(front, None, tmp_path, protocol) as http:
        response = await http.post(TOKEN, json=credentials(account))
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "PUB_CERT_HEADER_MISSING"


async def test_token_without_its_certificate_is_refused(
    rt: Runtime, front: Front, tmp_path: Path, protocol: str
) -> None:
    account, other = await make_account(rt), await make_account(rt, name="Outra Loja")
    async with client(front, account, tmp_path, protocol) as http:
        bearer = {"Authorization": f"Bearer {await token(http, account)}"}
    for presented in (None, other):  # no certificate, another registered certificate
        async with client(front, presented, tmp_path, protocol) as http:
            response = await http.get("/accounts/balances", headers=bearer)
        assert response.status_code == 401, (presented, response.text)
        assert response.headers["www-authenticate"].startswith("Bearer")


SMUGGLED = {
    "canonical": ["X-SSL-Client-Cert"],
    "lower case": ["x-ssl-client-cert"],
    "upper case": ["X-SSL-CLIENT-CERT"],
    "odd case": ["x-SsL-cLiEnT-cErT"],
    "twice": ["X-SSL-Client-Cert", "X-SSL-Client-Cert"],
    "twice, two cases": ["x-ssl-client-cert", "X-Ssl-Client-Cert"],
}


@pytest.mark.parametrize("names", SMUGGLED.values(), ids=SMUGGLED.keys())
async def test_client_cannot_send_the_certificate_header_itself(
    rt: Runtime, front: Front, tmp_path: Path, names: list[str]
) -> None:
    """The header a client sends carries the account's real, registered certificate, so it
    would be honoured if it reached pixgate (the direct request proves it). Through nginx,
    from a connection without a client certificate, it never arrives."""
    account = await make_account(rt)
    smuggled = [(name, cert_header(account.certificate_pem)) for name in names]
    body = json.dumps(credentials(account)).encode()

    anonymous = tls_context(front, None, tmp_path)
    async with httpx.AsyncClient(base_url=front.upstream, timeout=10) as pixgate:
        direct = await pixgate.post(
            TOKEN, content=body, headers=[("Content-Type", "application/json"), *smuggled]
        )
        assert direct.status_code == 201, direct.text
        status, refused = await asyncio.to_thread(
            raw_request, front, anonymous, "POST", TOKEN, smuggled, body
        )
        assert (status, refused["code"]) == (400, "PUB_CERT_HEADER_MISSING")

        bearer = [("Authorization", f"Bearer {direct.json()['access_token']}")]
        direct = await pixgate.get("/accounts/balances", headers=bearer + smuggled)
        assert direct.status_code == 200, direct.text
        status, refused = await asyncio.to_thread(
            raw_request, front, anonymous, "GET", "/accounts/balances", bearer + smuggled
        )
        assert status == 401, refused


async def test_presented_certificate_replaces_the_clients_header(
    rt: Runtime, front: Front, tmp_path: Path
) -> None:
    """With a client certificate presented, a header naming another one is replaced too."""
    holder, victim = await make_account(rt), await make_account(rt, name="Outra Loja")
    smuggled = [("X-SSL-Client-Cert", cert_header(victim.certificate_pem))]
    body = json.dumps(credentials(victim)).encode()
    status, refused = await asyncio.to_thread(
        raw_request, front, tls_context(front, holder, tmp_path), "POST", TOKEN, smuggled, body
    )
    assert (status, refused["code"]) == (403, "PUB_CERT_NOT_AUTHORIZED_FOR_ACCOUNT")


# --- certificates nginx's verification refuses: pixgate judges them -------------------------

# The certificate presented, and pixgate's answer at the token endpoint. nginx's own
# verification refuses all but the third with its HTML 400 ("The SSL certificate error").
JUDGED = {
    "expired": ({"starts": -30 * DAY, "ends": -DAY}, "PUB_CERT_EXPIRED"),
    "not yet valid": ({"starts": DAY, "ends": 30 * DAY}, "PUB_CERT_NOT_YET_VALID"),
    "unknown": ({"starts": -DAY, "ends": 30 * DAY}, "PUB_CERT_NOT_REGISTERED"),
    "unknown, for servers only": (
        {"starts": -DAY, "ends": 30 * DAY, "server_auth_only": True},
        "PUB_CERT_NOT_REGISTERED",
    ),
}


@pytest.mark.parametrize(("shape", "code"), JUDGED.values(), ids=JUDGED.keys())
async def test_pixgate_judges_the_certificate(
    rt: Runtime, front: Front, tmp_path: Path, protocol: str, shape: dict[str, Any], code: str
) -> None:
    account = await make_account(rt)
    async with client(front, client_certificate(**shape), tmp_path, protocol) as http:
        response = await http.post(TOKEN, json=credentials(account))
    assert response.http_version == protocol
    assert response.status_code == 401, response.text
    body = response.json()
    assert (body["code"], body["path"], body["method"]) == (code, TOKEN, "POST")
    # nginx's request id, which pixgate received and echoes
    assert re.fullmatch(r"[0-9a-f]{32}", body["errorId"])
    assert body["errorId"] == response.headers["x-request-id"]


async def test_a_registered_certificate_nginx_refuses_gets_a_token(
    rt: Runtime, front: Front, tmp_path: Path, protocol: str
) -> None:
    """The request reaches pixgate whole, its body included, and the registration decides."""
    account = await make_account(rt, balance="7.00")
    presented = client_certificate(starts=-DAY, ends=30 * DAY, server_auth_only=True)
    await accounts.register_certificate(rt, account.account_id, presented.certificate_pem)
    async with client(front, presented, tmp_path, protocol) as http:
        bearer = {"Authorization": f"Bearer {await token(http, account)}"}
        response = await http.get("/accounts/balances", headers=bearer)
    assert response.status_code == 200, response.text
    assert response.json()["data"][0]["balanceAmount"]["available"] == 7


async def test_a_token_outliving_its_certificate_is_refused(
    rt: Runtime, front: Front, tmp_path: Path, protocol: str
) -> None:
    """A token issued while its certificate was valid still has up to 30 minutes to run when
    the certificate expires; nginx no longer refuses the certificate, pixgate does."""
    account = await make_account(rt)
    expired = client_certificate(starts=-30 * DAY, ends=-DAY)
    await accounts.register_certificate(rt, account.account_id, expired.certificate_pem)
    issued = rt.signer.issue(
        client_id=account.client_id,
        account_id=account.account_id,
        thumbprint=certificates.from_pem(expired.certificate_pem).thumbprint,
        now=dt.datetime.now(dt.UTC),
        ttl=1800,
    )
    async with client(front, expired, tmp_path, protocol) as http:
        response = await http.get(
            "/accounts/balances", headers={"Authorization": f"Bearer {issued}"}
        )
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == "Bearer"
    assert "notAfter has passed" in response.json()["message"]


async def test_a_certificate_nginx_refuses_meets_the_same_front(
    front: Front, tmp_path: Path, protocol: str
) -> None:
    """nginx hands such a request on from a named location, which would skip the body limit
    and the allow-list of /metrics, and open the error page's internal location: none of it
    happens. Without a certificate, the error page's location is not found either."""
    expired = tls_context(front, client_certificate(**JUDGED["expired"][0]), tmp_path)
    declared = await exchange(front, expired, protocol, b"POST", CASH_OUT.encode(), OVER_THE_LIMIT)
    metrics = await exchange(front, expired, protocol, b"GET", b"/metrics", [], source=ELSEWHERE)
    hidden = [
        await exchange(front, context, protocol, b"GET", b"/_pixgate/error", [])
        for context in (expired, tls_context(front, None, tmp_path))
    ]
    async with client(
        front, client_certificate(**JUDGED["expired"][0]), tmp_path, protocol
    ) as http:
        streamed = await http.post(CASH_OUT, content=chunks(b"x" * (MAX_BODY_BYTES + 1)))
    for too_large in (declared, Answer.of(streamed)):
        assert_nginx_answer(too_large, 413, **TOO_LARGE, path=CASH_OUT, method="POST")
    assert_nginx_answer(metrics, 403, code="FORBIDDEN", path="/metrics", method="GET")
    for answer in hidden:
        assert_nginx_answer(answer, 404, code="NOT_FOUND", path="/_pixgate/error", method="GET")


@pytest.mark.parametrize(
    ("presented", "code"),
    [(None, "PUB_CERT_HEADER_MISSING"), (JUDGED["expired"][0], "PUB_CERT_EXPIRED")],
    ids=["no certificate", "a certificate nginx refuses"],
)
async def test_the_clients_header_never_arrives(
    rt: Runtime,
    front: Front,
    tmp_path: Path,
    protocol: str,
    presented: dict[str, Any] | None,
    code: str,
) -> None:
    """Over both protocols, and on the way nginx hands a refused certificate to pixgate: a
    header naming the account's valid certificate, sent twice, is replaced by the handshake's."""
    account = await make_account(rt)
    smuggled = [("x-ssl-client-cert", cert_header(account.certificate_pem))] * 2
    certificate = None if presented is None else client_certificate(**presented)
    async with client(front, certificate, tmp_path, protocol) as http:
        response = await http.post(TOKEN, json=credentials(account), headers=smuggled)
    assert response.http_version == protocol
    assert response.json()["code"] == code, response.text


# --- a browser: the dashboard and the API docs, without a client certificate ---------------


def cookie_flags(response: httpx.Response, name: str) -> set[str]:
    """The attributes of the Set-Cookie of `name`, lower-cased."""
    [cookie] = [c for c in response.headers.get_list("set-cookie") if c.startswith(f"{name}=")]
    return {part.strip().lower() for part in cookie.split(";")[1:]}


async def test_a_browser_signs_in_to_the_dashboard_through_nginx(
    rt: Runtime, front: Front, tmp_path: Path
) -> None:
    account = await make_account(rt)
    async with client(front, None, tmp_path) as browser:
        page = await browser.get("/dashboard/login")
        assert page.status_code == 200, page.text
        assert page.headers["content-type"].startswith("text/html")
        signed_in = await browser.post(
            "/dashboard/login",
            data={
                "clientId": account.client_id,
                "clientSecret": account.client_secret,
                "csrf": csrf_of(page),
            },
        )
        assert signed_in.status_code == 303, signed_in.text
        assert signed_in.headers["location"] == "/dashboard"
        # nginx says https (X-Forwarded-Proto), so the cookie is only ever sent back over TLS
        assert {"secure", "httponly", "samesite=strict"} <= cookie_flags(
            signed_in, "pixgate_session"
        )
        home = await browser.get("/dashboard")
    assert home.status_code == 200, home.text
    assert home.headers["content-type"].startswith("text/html")
    assert 'action="/dashboard/logout"' in home.text


async def test_swagger_ui_and_its_assets_through_nginx(
    front: Front, tmp_path: Path, protocol: str
) -> None:
    """Public: from an address the file does not allow /metrics to."""
    async with client(front, None, tmp_path, protocol, source=ELSEWHERE) as browser:
        page = await browser.get("/docs")
        assert page.status_code == 200, page.text
        assert page.headers["content-type"].startswith("text/html")
        [script] = re.findall(r'<script src="([^"]+)"', page.text)
        [stylesheet] = re.findall(r'rel="stylesheet" href="([^"]+)"', page.text)
        [spec] = re.findall(r"url: '([^']+)'", page.text)
        assert script.endswith("swagger-ui-bundle.js")
        bundle, css, openapi = [await browser.get(url) for url in (script, stylesheet, spec)]
    assert bundle.status_code == 200
    assert "javascript" in bundle.headers["content-type"]
    assert "SwaggerUIBundle" in bundle.text
    assert (css.status_code, css.headers["content-type"].split(";")[0]) == (200, "text/css")
    assert openapi.status_code == 200
    assert openapi.json()["info"]["title"] == "pixgate"


def _handshake(front: Front, version: ssl.TLSVersion) -> str | None:
    """The protocol a handshake offering only `version` settles on."""
    context = ssl.create_default_context(cafile=str(front.ca_file))
    context.set_ciphers("DEFAULT@SECLEVEL=0")  # let this client offer what the server refuses
    with warnings.catch_warnings():
        # offering a deprecated version is the point: the server must refuse it
        warnings.simplefilter("ignore", DeprecationWarning)
        context.minimum_version = context.maximum_version = version
    with (
        socket.create_connection(("127.0.0.1", front.tls_port), timeout=10) as tcp,
        context.wrap_socket(tcp, server_hostname="127.0.0.1") as tls,
    ):
        return tls.version()


async def test_tls_1_2_and_later_only(front: Front) -> None:
    assert await asyncio.to_thread(_handshake, front, ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
    assert await asyncio.to_thread(_handshake, front, ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
    with pytest.raises(ssl.SSLError) as refused:
        await asyncio.to_thread(_handshake, front, ssl.TLSVersion.TLSv1_1)
    assert refused.value.reason == "TLSV1_ALERT_PROTOCOL_VERSION"  # nginx's alert, not ours


async def test_forwarded_headers_come_from_nginx(front: Front, tmp_path: Path) -> None:
    """X-Request-Id is nginx's own (pixgate echoes it); Host and X-Forwarded-Proto show in
    the absolute URL of pixgate's trailing-slash redirect. pixgate exposes no client address,
    so X-Forwarded-For is not observable here."""
    async with client(front, None, tmp_path) as http:
        response = await http.get("/readyz", headers={"X-Request-Id": "chosen-by-the-client"})
        redirect = await http.get("/readyz/", headers={"X-Forwarded-Proto": "gopher"})
    assert response.status_code == 200
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["x-request-id"])
    assert redirect.status_code == 307, redirect.text
    assert redirect.headers["location"] == "https://127.0.0.1/readyz"


async def test_plain_http_redirects_to_https(front: Front) -> None:
    """To the configured name, whatever Host the client sent."""
    async with httpx.AsyncClient(base_url=front.http, timeout=10) as http:
        response = await http.get("/accounts/balances?page=2", headers={"Host": "evil.example"})
    assert response.status_code == 301
    assert response.headers["location"] == "https://pixgate.example.com/accounts/balances?page=2"
