"""The shipped nginx front, deploy/nginx/pixgate.conf, as the tests run it: Debian's real nginx
with the file's placeholders filled in (ports, certificate paths, log directory, upstream
address), each replacement checked, so a change to the file is tested as it ships; and the
clients that speak to it over real TLS, over HTTP/1.1 and HTTP/2, through httpx or byte for
byte.
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
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import h2.config
import h2.connection
import h2.events
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.helpers import GENERAL_ENVELOPE
from tests.processes import free_port

NGINX = Path("/usr/sbin/nginx")
SHIPPED = Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "pixgate.conf"
TOKEN = "/api/auth/token"
CASH_OUT = "/api/pix/cash-out"
MAX_BODY_BYTES = 1_048_576  # PIXGATE_MAX_BODY_BYTES' default, and the config's 1m
PROTOCOLS = ["HTTP/1.1", "HTTP/2"]
DAY = dt.timedelta(days=1)
ELSEWHERE = "127.0.0.2"  # a client address the file does not allow /metrics to (loopback too)

needs_nginx = pytest.mark.skipif(
    not NGINX.exists(), reason="Debian's nginx is not installed (apt-get install -y nginx)"
)


# --- a throwaway nginx running the shipped configuration ------------------------------------


@dataclass(frozen=True)
class Front:
    https: str  # https://127.0.0.1:PORT, nginx's TLS server
    http: str  # http://127.0.0.1:PORT, nginx's redirecting server
    upstream: str  # pixgate itself, bypassing nginx
    ca_file: Path  # trusts nginx's server certificate
    logs: Path  # nginx's log directory: pixgate.access.log, pixgate.error.log

    @property
    def tls_port(self) -> int:
        return int(self.https.rsplit(":", 1)[1])

    @property
    def http_port(self) -> int:
        return int(self.http.rsplit(":", 1)[1])


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _self_signed(
    common_name: str, key: ec.EllipticCurvePrivateKey, starts: dt.datetime, ends: dt.datetime
) -> x509.CertificateBuilder:
    """A certificate of `key` naming `common_name` as its subject and its issuer, valid from
    `starts` to `ends`: extensions and signature to add."""
    return (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(starts)
        .not_valid_after(ends)
    )


def _server_certificate(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate it signs for pixgate.example.com and 127.0.0.1:
    (CA file, certificate chain file, key file)."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        _self_signed("pixgate test CA", ca_key, now - dt.timedelta(minutes=5), now + DAY)
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
        .not_valid_after(now + DAY)
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
    *,
    tls_port: int,
    http_port: int,
    upstream: str,
    chain: Path,
    key: Path,
    logs: Path,
    source: Path = SHIPPED,
    server_name: str = "pixgate.example.com",
) -> str:
    """deploy/nginx/pixgate.conf (or `source`, that file as installed for `server_name`) with
    this machine's ports, files and pixgate filled in."""
    text = source.read_text()
    text = _replace(text, "listen 443 ssl http2;", f"listen 127.0.0.1:{tls_port} ssl http2;", 1)
    text = _replace(text, "listen 80;", f"listen 127.0.0.1:{http_port};", 1)
    text = _replace(
        text,
        f"ssl_certificate /etc/nginx/tls/{server_name}/fullchain.pem;",
        f"ssl_certificate {chain};",
        1,
    )
    text = _replace(
        text,
        f"ssl_certificate_key /etc/nginx/tls/{server_name}/privkey.pem;",
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
def nginx_front(
    upstream: str, *, source: Path = SHIPPED, server_name: str = "pixgate.example.com"
) -> Iterator[Front]:
    """Debian's nginx, not as a daemon, in its own temporary prefix on free loopback ports,
    running the shipped site (or `source`, as `site_config` reads it)."""
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
                source=source,
                server_name=server_name,
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
                logs=directory / "logs",
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


# --- clients ---------------------------------------------------------------------------------


class Presented(Protocol):
    """What a client presents in the handshake: an account's certificate, or any other."""

    @property
    def certificate_pem(self) -> str: ...

    @property
    def private_key_pem(self) -> str: ...


@dataclass(frozen=True)
class ClientCertificate:
    certificate_pem: str
    private_key_pem: str


def client_certificate(
    *, starts: dt.timedelta, ends: dt.timedelta, server_auth_only: bool = False
) -> ClientCertificate:
    """A self-signed client certificate valid from now + `starts` to now + `ends`. With
    `server_auth_only` its extended key usage is TLS server only, which nginx's verification
    refuses for a client ("unsuitable certificate purpose") as it refuses the wrong dates."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    builder = _self_signed("a client of pixgate", key, now + starts, now + ends)
    if server_auth_only:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
    certificate = builder.sign(key, hashes.SHA256())
    return ClientCertificate(
        certificate.public_bytes(serialization.Encoding.PEM).decode(), _pem_key(key).decode()
    )


def tls_context(front: Front, presented: Presented | None, tmp_path: Path) -> ssl.SSLContext:
    """Trusts nginx's certificate; presents `presented`'s client certificate, if any."""
    context = ssl.create_default_context(cafile=str(front.ca_file))
    if presented is not None:
        name = uuid.uuid4().hex
        certificate, key = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
        certificate.write_text(presented.certificate_pem)
        key.write_text(presented.private_key_pem)
        key.chmod(0o600)
        context.load_cert_chain(certificate, key)
    return context


def client(
    front: Front,
    presented: Presented | None,
    tmp_path: Path,
    protocol: str = "HTTP/1.1",
    *,
    source: str = "127.0.0.1",
) -> httpx.AsyncClient:
    """An HTTPS client of nginx speaking `protocol` only, from the address `source`,
    presenting `presented`'s certificate, or none."""
    http2 = protocol == "HTTP/2"
    transport = httpx.AsyncHTTPTransport(
        verify=tls_context(front, presented, tmp_path),
        http1=not http2,
        http2=http2,
        local_address=source,
    )
    return httpx.AsyncClient(base_url=front.https, transport=transport, timeout=10)


@dataclass(frozen=True)
class Answer:
    """A response, whoever read it: its status, headers (any case) and body."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    @classmethod
    def of(cls, response: httpx.Response) -> Answer:
        return cls(response.status_code, response.headers, response.content)


def h1_exchange(
    front: Front,
    context: ssl.SSLContext | None,
    data: bytes,
    *,
    source: str = "127.0.0.1",
    port: int | None = None,
) -> Answer:
    """`data` on the wire to nginx's TLS port (or `port`) exactly as given (malformed at
    will), over TLS unless `context` is None, and the answer nginx sends."""
    with socket.create_connection(
        ("127.0.0.1", port or front.tls_port), timeout=10, source_address=(source, 0)
    ) as tcp:
        stream = tcp if context is None else context.wrap_socket(tcp, server_hostname="127.0.0.1")
        with stream:
            stream.sendall(data)
            response = http.client.HTTPResponse(stream)
            response.begin()
            headers = {name.lower(): value for name, value in response.getheaders()}
            return Answer(response.status, headers, response.read())


def h2_exchange(
    front: Front,
    context: ssl.SSLContext,
    method: bytes,
    path: bytes,
    headers: list[tuple[bytes, bytes]],
    *,
    source: str = "127.0.0.1",
) -> Answer:
    """One HTTP/2 request whose header block goes out byte for byte (h2 set to neither check
    nor normalize it), and its answer. No body is sent: for requests nginx answers from their
    headers alone."""
    context.set_alpn_protocols(["h2"])
    connection = h2.connection.H2Connection(
        h2.config.H2Configuration(
            client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False
        )
    )
    pseudo = [(b":method", method), (b":path", path), (b":scheme", b"https")]
    with (
        socket.create_connection(
            ("127.0.0.1", front.tls_port), timeout=10, source_address=(source, 0)
        ) as tcp,
        context.wrap_socket(tcp, server_hostname="127.0.0.1") as tls,
    ):
        assert tls.selected_alpn_protocol() == "h2"
        connection.initiate_connection()
        connection.send_headers(1, [*pseudo, (b":authority", b"127.0.0.1"), *headers])
        tls.sendall(connection.data_to_send())
        received: dict[str, str] = {}
        body = b""
        while data := tls.recv(65536):
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    received = {n.decode(): v.decode() for n, v in event.headers}
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
                    connection.acknowledge_received_data(event.flow_controlled_length, 1)
                elif isinstance(event, h2.events.StreamEnded):
                    return Answer(int(received.pop(":status")), received, body)
            tls.sendall(connection.data_to_send())
    raise AssertionError("nginx closed the connection without answering")


NGINX_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def assert_nginx_answer(answer: Answer, status: int, *, tls: bool = True, **fields: str) -> None:
    """An answer nginx gave itself: pixgate's general envelope with `status` and `fields`,
    nginx's request id as errorId and X-Request-Id, and the time of the request in UTC; the
    HTTPS server's HSTS (`tls`), and Retry-After on a 503 only."""
    assert answer.status == status, answer.body
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers.get("strict-transport-security") == ("max-age=63072000" if tls else None)
    assert ("retry-after" in answer.headers) == (status == 503)
    body = json.loads(answer.body)
    assert set(body) == GENERAL_ENVELOPE, body
    assert body["statusCode"] == status
    assert {name: body[name] for name in fields} == fields
    assert re.fullmatch(r"[0-9a-f]{32}", body["errorId"])
    assert body["errorId"] == answer.headers["x-request-id"]
    assert NGINX_TIMESTAMP.fullmatch(body["timestamp"]), body["timestamp"]
    stamp = dt.datetime.strptime(body["timestamp"], "%Y-%m-%dT%H:%M:%S.%f%z")
    assert abs(dt.datetime.now(dt.UTC) - stamp) < dt.timedelta(minutes=1)


async def chunks(body: bytes) -> AsyncIterator[bytes]:
    """A body without a Content-Length: chunked over HTTP/1.1, plain DATA frames over HTTP/2."""
    for start in range(0, len(body), 65_536):
        yield body[start : start + 65_536]


# The fields of nginx's 413, and a Content-Length one byte over the limit.
TOO_LARGE = {
    "code": "PAYLOAD_TOO_LARGE",
    "message": f"request body is larger than {MAX_BODY_BYTES} bytes",
    "error": "Request Entity Too Large",
}
OVER_THE_LIMIT = [(b"content-length", str(MAX_BODY_BYTES + 1).encode())]


async def exchange(
    front: Front,
    context: ssl.SSLContext,
    protocol: str,
    method: bytes,
    path: bytes,
    headers: list[tuple[bytes, bytes]],
    *,
    source: str = "127.0.0.1",
) -> Answer:
    """One request that nginx answers from its head alone, its request line (or pseudo-headers)
    and header fields sent byte for byte over `protocol`. Header names in lower case."""
    if protocol == "HTTP/2":
        return await asyncio.to_thread(
            h2_exchange, front, context, method, path, headers, source=source
        )
    fields = b"".join(b"%s: %s\r\n" % field for field in [(b"host", b"pixgate"), *headers])
    data = b"%s %s HTTP/1.1\r\n%s\r\n" % (method, path, fields)
    return await asyncio.to_thread(h1_exchange, front, context, data, source=source)
