"""The shipped nginx front, deploy/nginx/pixgate.conf, run as Debian's real nginx in front of a
real `pixgate serve`, spoken to over real TLS.

The configuration under test is the shipped file with its placeholders filled in (ports,
certificate paths, log directory, upstream address), each replacement checked, so a change
to the file is tested as it ships. What it must hold: the client certificate reaches pixgate
only from the TLS handshake, never from a header the client sends; the body limit matches
PIXGATE_MAX_BODY_BYTES; nginx's own errors are JSON; a browser without a client certificate
can use the dashboard (its session cookie Secure) and the Swagger UI with its assets.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import http.client
import ipaddress
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pixgate.runtime import Runtime
from pixgate.services import accounts
from tests.dashboard.conftest import csrf_of
from tests.helpers import cert_header, make_account
from tests.processes import free_port, serving

NGINX = Path("/usr/sbin/nginx")
SHIPPED = Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "pixgate.conf"
TOKEN = "/api/auth/token"
MAX_BODY_BYTES = 1_048_576  # PIXGATE_MAX_BODY_BYTES' default, and the config's 1m

pytestmark = pytest.mark.skipif(
    not NGINX.exists(), reason="Debian's nginx is not installed (apt-get install -y nginx)"
)


# --- a throwaway nginx running the shipped configuration ------------------------------------


@dataclass(frozen=True)
class Front:
    https: str  # https://127.0.0.1:PORT, nginx's TLS server
    http: str  # http://127.0.0.1:PORT, nginx's redirecting server
    upstream: str  # pixgate itself, bypassing nginx
    ca_file: Path  # trusts nginx's server certificate

    @property
    def tls_port(self) -> int:
        return int(self.https.rsplit(":", 1)[1])


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _server_certificate(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate it signs for pixgate.example.com and 127.0.0.1:
    (CA file, certificate chain file, key file)."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("pixgate test CA"))
        .issuer_name(_name("pixgate test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name("pixgate.example.com"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("pixgate.example.com"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, chain_file, key_file = (directory / n for n in ("ca.pem", "chain.pem", "key.pem"))
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(_pem_key(key))
    key_file.chmod(0o600)
    return ca_file, chain_file, key_file


def _replace(text: str, old: str, new: str, count: int) -> str:
    """Fill one placeholder, failing loudly if the shipped file no longer has it as expected."""
    found = text.count(old)
    assert found == count, f"{SHIPPED.name}: {old!r} appears {found} times, expected {count}"
    return text.replace(old, new)


def site_config(
    *, tls_port: int, http_port: int, upstream: str, chain: Path, key: Path, logs: Path
) -> str:
    """deploy/nginx/pixgate.conf with this machine's ports, files and pixgate filled in."""
    text = SHIPPED.read_text()
    text = _replace(text, "listen 443 ssl http2;", f"listen 127.0.0.1:{tls_port} ssl http2;", 1)
    text = _replace(text, "listen 80;", f"listen 127.0.0.1:{http_port};", 1)
    text = _replace(
        text,
        "ssl_certificate /etc/nginx/tls/pixgate.example.com/fullchain.pem;",
        f"ssl_certificate {chain};",
        1,
    )
    text = _replace(
        text,
        "ssl_certificate_key /etc/nginx/tls/pixgate.example.com/privkey.pem;",
        f"ssl_certificate_key {key};",
        1,
    )
    address = upstream.removeprefix("http://")
    text = _replace(text, "server 127.0.0.1:8080;", f"server {address};", 1)
    return _replace(text, "/var/log/nginx/", f"{logs}/", 3)


def main_config(directory: Path, site: Path) -> str:
    """What /etc/nginx/nginx.conf provides, confined to `directory`."""
    temp = directory / "temp"
    return f"""\
daemon off;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/logs/error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {directory}/logs/access.log;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {site};
}}
"""


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def nginx_front(upstream: str) -> Iterator[Front]:
    """Debian's nginx, not as a daemon, in its own temporary prefix on free loopback ports."""
    with tempfile.TemporaryDirectory(prefix="pixgate-nginx-") as name:
        directory = Path(name)
        # Run as root, nginx's workers switch to `nobody`, which must reach the temp dirs.
        directory.chmod(0o755)
        (directory / "logs").mkdir()
        (directory / "temp").mkdir(mode=0o755)  # nginx makes only the last level of a path
        ca_file, chain, key = _server_certificate(directory)
        tls_port, http_port = free_port(), free_port()
        site = directory / "pixgate.conf"
        site.write_text(
            site_config(
                tls_port=tls_port,
                http_port=http_port,
                upstream=upstream,
                chain=chain,
                key=key,
                logs=directory / "logs",
            )
        )
        conf = directory / "nginx.conf"
        conf.write_text(main_config(directory, site))
        command = [
            str(NGINX),
            "-p",
            str(directory),
            "-c",
            str(conf),
            "-e",
            str(directory / "logs" / "error.log"),
        ]
        checked = subprocess.run([*command, "-t"], capture_output=True, text=True)
        assert checked.returncode == 0, f"nginx -t refused the configuration:\n{checked.stderr}"

        output = (directory / "logs" / "nginx.out").open("w")
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 15
            while not (_listening(tls_port) and _listening(http_port)):
                if process.poll() is not None or time.monotonic() > deadline:
                    log = (directory / "logs" / "error.log").read_text(errors="replace")
                    raise AssertionError(f"nginx did not start (exit {process.poll()}):\n{log}")
                time.sleep(0.05)
            yield Front(
                https=f"https://127.0.0.1:{tls_port}",
                http=f"http://127.0.0.1:{http_port}",
                upstream=upstream,
                ca_file=ca_file,
            )
        finally:
            process.terminate()  # SIGTERM: nginx's fast shutdown, the master waits for its workers
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            # nothing of this nginx may outlive the test: a stray worker is in the same session
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            output.close()


@pytest.fixture(scope="module")
def front(database_url: str) -> Iterator[Front]:
    with serving(database_url) as upstream, nginx_front(upstream) as running:
        yield running


# --- clients --------------------------------------------------------------------------------


def tls_context(
    front: Front, account: accounts.NewAccount | None, tmp_path: Path
) -> ssl.SSLContext:
    """Trusts nginx's certificate; presents `account`'s client certificate, if any."""
    context = ssl.create_default_context(cafile=str(front.ca_file))
    if account is not None:
        certificate = tmp_path / f"{account.client_id}.crt"
        key = tmp_path / f"{account.client_id}.key"
        certificate.write_text(account.certificate_pem)
        key.write_text(account.private_key_pem)
        key.chmod(0o600)
        context.load_cert_chain(certificate, key)
    return context


def client(front: Front, account: accounts.NewAccount | None, tmp_path: Path) -> httpx.AsyncClient:
    """An HTTPS client of nginx, presenting `account`'s certificate, or none."""
    return httpx.AsyncClient(
        base_url=front.https, verify=tls_context(front, account, tmp_path), timeout=10
    )


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
    rt: Runtime, front: Front, tmp_path: Path
) -> None:
    account = await make_account(rt, balance="250.00")
    async with client(front, account, tmp_path) as http:
        issued = await token(http, account)
        response = await http.get(
            "/accounts/balances", headers={"Authorization": f"Bearer {issued}"}
        )
    assert response.status_code == 200, response.text
    assert response.json()["data"][0]["balanceAmount"]["available"] == 250


async def test_no_client_certificate_no_token(rt: Runtime, front: Front, tmp_path: Path) -> None:
    account = await make_account(rt)
    async with client(front, None, tmp_path) as http:
        response = await http.post(TOKEN, json=credentials(account))
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "PUB_CERT_HEADER_MISSING"


async def test_token_without_its_certificate_is_refused(
    rt: Runtime, front: Front, tmp_path: Path
) -> None:
    account, other = await make_account(rt), await make_account(rt, name="Outra Loja")
    async with client(front, account, tmp_path) as http:
        bearer = {"Authorization": f"Bearer {await token(http, account)}"}
    for presented in (None, other):  # no certificate, another registered certificate
        async with client(front, presented, tmp_path) as http:
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


async def test_swagger_ui_and_its_assets_through_nginx(front: Front, tmp_path: Path) -> None:
    async with client(front, None, tmp_path) as browser:
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


# --- the rest of the front ------------------------------------------------------------------


async def test_body_limit_matches_pixgate(rt: Runtime, front: Front, tmp_path: Path) -> None:
    account = await make_account(rt)
    prefix = json.dumps(credentials(account))[:-1] + ', "padding": "'
    at_limit = (prefix + "x" * (MAX_BODY_BYTES - len(prefix) - 2) + '"}').encode()
    assert len(at_limit) == MAX_BODY_BYTES
    headers = {"Content-Type": "application/json"}
    async with client(front, account, tmp_path) as http:
        accepted = await http.post(TOKEN, content=at_limit, headers=headers)
        too_large = await http.post(TOKEN, content=at_limit + b" ", headers=headers)
    assert accepted.status_code == 201, accepted.text
    assert too_large.status_code == 413
    assert too_large.headers["content-type"] == "application/json"
    assert too_large.json() == {  # nginx's answer: pixgate's would be the full envelope
        "statusCode": 413,
        "message": f"request body is larger than {MAX_BODY_BYTES} bytes",
        "error": "Payload Too Large",
    }


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


async def test_pixgate_down_is_a_json_503(tmp_path: Path) -> None:
    with nginx_front(f"http://127.0.0.1:{free_port()}") as down:
        async with client(down, None, tmp_path) as http:
            response = await http.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "statusCode": 503,
        "message": "the gateway is unavailable, try again",
        "error": "Service Unavailable",
    }
