"""Client certificates: reading the proxy's header, fingerprints, validity windows.

The fingerprint is the SHA-256 of the DER bytes, written as lowercase hex; the token
binding of RFC 8705 (`x5t#S256`) is the same digest in unpadded base64url.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import unquote

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

_FINGERPRINT = re.compile(r"^[0-9a-f]{64}$")


class MalformedCertificate(ValueError):
    """The header or file does not hold exactly one readable PEM certificate."""


@dataclass(frozen=True, slots=True)
class ClientCertificate:
    pem: str
    fingerprint: str
    subject: str
    not_before: datetime
    not_after: datetime

    @property
    def thumbprint(self) -> str:
        """The RFC 8705 `x5t#S256` value bound into tokens."""
        return thumbprint_of(self.fingerprint)


def from_header(value: str) -> ClientCertificate:
    """Read `X-SSL-Client-Cert` as nginx's `$ssl_client_escaped_cert` sends it.

    Percent-decoding follows RFC 3986 (`unquote`, not form decoding): a raw `+` in the
    base64 body stays a `+`.
    """
    return from_pem(unquote(value))


def from_pem(pem: str | bytes) -> ClientCertificate:
    data = pem.encode() if isinstance(pem, str) else pem
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise MalformedCertificate("no PEM certificate block")
    try:
        cert = x509.load_pem_x509_certificate(data)
    except ValueError as exc:
        raise MalformedCertificate(str(exc)) from exc
    der = cert.public_bytes(Encoding.DER)
    return ClientCertificate(
        pem=cert.public_bytes(Encoding.PEM).decode(),
        fingerprint=hashlib.sha256(der).hexdigest(),
        subject=cert.subject.rfc4514_string(),
        not_before=cert.not_valid_before_utc,
        not_after=cert.not_valid_after_utc,
    )


def normalize_fingerprint(value: str) -> str:
    """Accept a fingerprint in either case, with or without colons."""
    fingerprint = value.replace(":", "").strip().lower()
    if not _FINGERPRINT.match(fingerprint):
        raise ValueError("a fingerprint is 64 hexadecimal digits (SHA-256)")
    return fingerprint


def thumbprint_of(fingerprint: str) -> str:
    return base64.urlsafe_b64encode(bytes.fromhex(fingerprint)).rstrip(b"=").decode()


@dataclass(frozen=True, slots=True)
class IssuedCertificate:
    certificate_pem: str
    private_key_pem: str
    certificate: ClientCertificate


MAX_COMMON_NAME = 64
"""UTF-8 bytes of a certificate's common name (RFC 5280's upper bound, as `cryptography`
counts it)."""


def issue_client_certificate(common_name: str, *, valid_days: int = 365) -> IssuedCertificate:
    """A fresh EC P-256 key pair and a self-signed certificate for a new client, whose common
    name is `common_name` cut to `MAX_COMMON_NAME` bytes (never inside a character)."""
    from datetime import UTC, timedelta

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import NoEncryption, PrivateFormat
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = common_name.encode()[:MAX_COMMON_NAME].decode(errors="ignore")
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=valid_days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(Encoding.PEM).decode()
    return IssuedCertificate(
        certificate_pem=pem,
        private_key_pem=key.private_bytes(
            Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
        ).decode(),
        certificate=from_pem(pem),
    )
