"""Accounts and their means of authentication: credentials and certificates.

The ledger and the certificates' rules are imported by the functions that use them: the
ledger's public module brings the statement's wire models (pydantic), the certificates'
rules cryptography's X.509 parser, which `pixgate accounts list` and `show` have no use for
and would load on every run.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pixgate.accounts.queries import accounts as account_rows
from pixgate.accounts.queries import credentials as credential_rows
from pixgate.accounts.queries import keys as key_rows
from pixgate.accounts.queries.accounts import Account
from pixgate.accounts.rules.clients import AuthMethod
from pixgate.core import names
from pixgate.core.errors import Conflict, NotFound, ValidationFailed
from pixgate.core.money import InvalidAmount, to_cents
from pixgate.core.pix.documents import is_valid_document, only_document_chars
from pixgate.runtime import Runtime

if TYPE_CHECKING:
    from pixgate.accounts.rules.certificates import ClientCertificate


@dataclass(frozen=True, slots=True)
class NewCredential:
    account_id: int
    client_id: str
    client_secret: str | None
    """None for a `tls_client_auth` credential: its certificate authenticates it."""
    auth_method: AuthMethod = AuthMethod.CLIENT_SECRET


@dataclass(frozen=True, slots=True)
class NewAccount:
    account_id: int
    client_id: str
    client_secret: str
    certificate_pem: str
    private_key_pem: str
    certificate_fingerprint: str
    pix_key: str


def hash_secret(key: bytes, secret: str) -> bytes:
    """Secrets are 32+ random characters, so a keyed SHA-256 is enough (no slow hash needed)."""
    return hmac.new(key, secret.encode(), hashlib.sha256).digest()


async def create(
    rt: Runtime, *, name: str, document: str | None = None, balance: Decimal | str = "0"
) -> NewAccount:
    """An account with one credential and one client certificate, in one transaction."""
    from pixgate.accounts.rules import certificates
    from pixgate.ledger.public import journal

    try:
        name = names.account_name(name)
    except names.InvalidName as exc:
        raise ValidationFailed([f"name: {exc}"]) from exc
    if document is not None:
        document = only_document_chars(document)
        if not is_valid_document(document):
            raise ValidationFailed(["document must be a valid CPF or CNPJ"])
    try:
        seed = to_cents(balance)
    except InvalidAmount as exc:
        raise ValidationFailed([f"balance: {exc}"]) from exc
    if seed < 0:
        raise ValidationFailed(["balance must not be negative"])
    if seed and not rt.settings.sandbox:
        raise ValidationFailed(["a balance can be seeded only in sandbox mode"])
    issued = certificates.issue_client_certificate(f"pixgate client {name}")
    async with rt.db.begin() as conn:
        account_id = await account_rows.insert(conn, name=name, document=document)
        client_id, client_secret = await _add_credential(rt, conn, account_id)
        await _add_certificate(conn, account_id, issued.certificate)
        pix_key = await key_rows.add_random(conn, account_id)
        if seed:
            await journal.fund(conn, account_id, seed, memo="sandbox seed balance")
    return NewAccount(
        account_id=account_id,
        client_id=client_id,
        client_secret=client_secret,
        certificate_pem=issued.certificate_pem,
        private_key_pem=issued.private_key_pem,
        certificate_fingerprint=issued.certificate.fingerprint,
        pix_key=pix_key,
    )


async def create_credential(
    rt: Runtime, account_id: int, *, method: AuthMethod = AuthMethod.CLIENT_SECRET
) -> NewCredential:
    """Another credential of an account: with a secret, or (`tls_client_auth`) none, the
    account's registered certificates authenticating it."""
    async with rt.db.begin() as conn:
        if not await credential_rows.account_exists(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        if method is AuthMethod.TLS_CLIENT_AUTH:
            return await _add_certificate_credential(conn, account_id)
        client_id, client_secret = await _add_credential(rt, conn, account_id)
    return NewCredential(account_id=account_id, client_id=client_id, client_secret=client_secret)


async def revoke_credential(rt: Runtime, client_id: str) -> None:
    try:
        parsed = uuid.UUID(client_id)
    except ValueError as exc:
        raise ValidationFailed(["clientId must be a UUID"]) from exc
    async with rt.db.begin() as conn:
        if not await credential_rows.revoke_credential(conn, parsed):
            raise NotFound(f"no active credential {client_id}")


async def register_certificate(rt: Runtime, account_id: int, pem: str) -> str:
    from pixgate.accounts.rules import certificates

    try:
        cert = certificates.from_pem(pem)
    except certificates.MalformedCertificate as exc:
        raise ValidationFailed([f"certificate: {exc}"]) from exc
    async with rt.db.begin() as conn:
        if not await credential_rows.account_exists(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        await _add_certificate(conn, account_id, cert)
    return cert.fingerprint


async def revoke_certificate(rt: Runtime, fingerprint: str) -> str:
    from pixgate.accounts.rules import certificates

    try:
        normalized = certificates.normalize_fingerprint(fingerprint)
    except ValueError as exc:
        raise ValidationFailed([str(exc)]) from exc
    async with rt.db.begin() as conn:
        if not await credential_rows.revoke_certificate(conn, normalized):
            raise NotFound(f"no active certificate {normalized}")
    return normalized


async def get(rt: Runtime, account_id: int) -> Account:
    async with rt.db.connection() as conn:
        row = await account_rows.get(conn, account_id)
    if row is None:
        raise NotFound(f"account {account_id} not found")
    return row


async def list_all(rt: Runtime) -> list[Account]:
    async with rt.db.connection() as conn:
        return await account_rows.list_all(conn)


async def update(rt: Runtime, account_id: int, changes: dict[str, Any]) -> Account:
    async with rt.db.begin() as conn:
        if not await account_rows.update(conn, account_id, changes):
            raise NotFound(f"account {account_id} not found")
        row = await account_rows.get(conn, account_id)
    assert row is not None
    return row


async def _add_credential(rt: Runtime, conn: Any, account_id: int) -> tuple[str, str]:
    """A credential with a secret: its clientId and the secret (shown once, kept hashed)."""
    client_id = uuid.uuid4()
    secret = secrets.token_urlsafe(32)  # 43 characters
    await credential_rows.insert_credential(
        conn,
        client_id=client_id,
        account_id=account_id,
        secret_hash=hash_secret(rt.secret_hash_key, secret),
    )
    return str(client_id), secret


async def _add_certificate_credential(conn: Any, account_id: int) -> NewCredential:
    client_id = uuid.uuid4()
    await credential_rows.insert_credential(
        conn,
        client_id=client_id,
        account_id=account_id,
        secret_hash=None,
        auth_method=AuthMethod.TLS_CLIENT_AUTH,
    )
    return NewCredential(
        account_id=account_id,
        client_id=str(client_id),
        client_secret=None,
        auth_method=AuthMethod.TLS_CLIENT_AUTH,
    )


async def _add_certificate(conn: Any, account_id: int, cert: ClientCertificate) -> None:
    added = await credential_rows.insert_certificate(
        conn,
        fingerprint=cert.fingerprint,
        account_id=account_id,
        pem=cert.pem,
        subject=cert.subject,
        not_before=cert.not_before,
        not_after=cert.not_after,
    )
    if not added:
        raise Conflict(f"certificate {cert.fingerprint} is already registered")
