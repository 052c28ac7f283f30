"""Mutual TLS on webhook callbacks: a real TLS receiver that requires a client certificate
issued by its CA (as a Central Bank callback receiver does) gets the notification when
PIXGATE_WEBHOOK_CLIENT_CERT/_KEY are set, and refuses the connection when they are not: the
attempt is logged as failed and retried, and arrives once the certificate is configured."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from tests.helpers import bearer, make_account
from tests.support import drain
from tests.webhooks.conftest import make_due
from tests.webhooks.receiver import Receiver

BASE = "/api/v2"
CPF = "52998224725"
CLIENT_NAME = "pixgate webhooks"


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(
    directory: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey
) -> tuple[Path, Path]:
    cert_path, key_path = directory / f"{stem}.pem", directory / f"{stem}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _issue(
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    subject: str,
    *,
    usage: x509.ObjectIdentifier | None,
    ca: bool = False,
    san: list[x509.GeneralName] | None = None,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1()) if not ca else issuer_key
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
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
        ).add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return builder.sign(issuer_key, hashes.SHA256()), key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A test CA, the receiver's server certificate for 127.0.0.1 and the gateway's client
    certificate, both issued by it."""
    directory = tmp_path_factory.mktemp("pki")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert, _ = _issue(_name("pixgate test CA"), ca_key, "pixgate test CA", usage=None, ca=True)
    ca_path, _ = _write(directory, "ca", ca_cert, ca_key)
    server, server_key = _issue(
        ca_cert.subject,
        ca_key,
        "receiver",
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
        san=[x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
    )
    client, client_key = _issue(
        ca_cert.subject, ca_key, CLIENT_NAME, usage=ExtendedKeyUsageOID.CLIENT_AUTH
    )
    server_cert, server_key_path = _write(directory, "server", server, server_key)
    client_cert, client_key_path = _write(directory, "client", client, client_key)
    return Pki(ca_path, server_cert, server_key_path, client_cert, client_key_path)


@pytest.fixture
async def mtls_receiver(pki: Pki) -> AsyncIterator[Receiver]:
    """A receiver over TLS that requires a client certificate issued by the test CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.server_cert, pki.server_key)
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cafile=pki.ca)
    server = Receiver()
    await server.start(tls=context)
    yield server
    await server.stop()


def _configured(rt: Runtime, pki: Pki, *, client_certificate: bool) -> None:
    """Loopback allowed (the receiver is local), the test CA trusted; with or without the
    client certificate."""
    rt.settings = rt.settings.model_copy(
        update={
            "allow_insecure_webhooks": True,
            "webhook_ca_file": str(pki.ca),
            "webhook_client_cert": str(pki.client_cert) if client_certificate else None,
            "webhook_client_key": str(pki.client_key) if client_certificate else None,
        }
    )


async def _pix_received_by_key(
    rt: Runtime, client: httpx.AsyncClient, url: str
) -> tuple[int, dict[str, str]]:
    account = await make_account(rt)
    headers = await bearer(client, account)
    configured = await client.put(
        f"{BASE}/webhook/{account.pix_key}", headers=headers, json={"webhookUrl": url}
    )
    assert configured.status_code == 200, configured.text
    received = await client.post(
        "/sandbox/pix/incoming",
        headers=headers,
        json={"value": "12.34", "payer": {"name": "Pagador", "document": CPF}},
    )
    assert received.status_code == 201, received.text
    return account.account_id, headers


def _subject(peer: dict[str, object] | None) -> str | None:
    assert peer is not None
    subject = peer["subject"]
    assert isinstance(subject, tuple)
    return dict(pair[0] for pair in subject).get("commonName")


async def test_the_callback_presents_the_client_certificate(
    rt: Runtime, client: httpx.AsyncClient, pki: Pki, mtls_receiver: Receiver
) -> None:
    _configured(rt, pki, client_certificate=True)
    await _pix_received_by_key(rt, client, mtls_receiver.url("/hook", scheme="https"))
    await drain(rt)
    (delivered,) = mtls_receiver.at("/hook/pix")
    assert _subject(delivered.peer_certificate) == CLIENT_NAME
    (pix,) = orjson.loads(delivered.body)["pix"]
    assert pix["valor"] == "12.34"


async def test_without_the_certificate_the_receiver_refuses_and_it_is_retried(
    rt: Runtime, client: httpx.AsyncClient, pki: Pki, mtls_receiver: Receiver
) -> None:
    _configured(rt, pki, client_certificate=False)
    account_id, _ = await _pix_received_by_key(
        rt, client, mtls_receiver.url("/hook", scheme="https")
    )
    await drain(rt)
    assert mtls_receiver.received == []
    log = await webhooks.delivery_log(rt, account_id)
    (delivery,) = [d for e in log.events for d in e.deliveries]
    assert delivery.status == "pending" and delivery.next_attempt_at is not None
    (failed,) = delivery.attempts
    assert failed.status_code is None and failed.error  # the handshake, refused

    _configured(rt, pki, client_certificate=True)
    await make_due(rt)
    await drain(rt)
    (delivered,) = mtls_receiver.at("/hook/pix")
    assert _subject(delivered.peer_certificate) == CLIENT_NAME
    log = await webhooks.delivery_log(rt, account_id)
    (delivery,) = [d for e in log.events for d in e.deliveries]
    assert delivery.status == "delivered"
    assert [a.status_code for a in delivery.attempts] == [None, 200]


async def test_a_certificate_that_cannot_be_loaded_sends_nothing_and_is_retried(
    rt: Runtime, client: httpx.AsyncClient, pki: Pki, mtls_receiver: Receiver, tmp_path: Path
) -> None:
    _configured(rt, pki, client_certificate=True)
    rt.settings = rt.settings.model_copy(
        update={"webhook_client_cert": str(tmp_path / "missing.pem")}
    )
    account_id, _ = await _pix_received_by_key(
        rt, client, mtls_receiver.url("/hook", scheme="https")
    )
    await drain(rt)
    assert mtls_receiver.received == []
    log = await webhooks.delivery_log(rt, account_id)
    (delivery,) = [d for e in log.events for d in e.deliveries]
    assert delivery.status == "pending"
    (failed,) = delivery.attempts
    assert failed.error is not None
    assert failed.error.startswith("not sent: the webhook client's TLS files cannot be loaded")
