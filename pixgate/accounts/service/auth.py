"""Token issuance and bearer verification for every other endpoint."""

from __future__ import annotations

import asyncio
import functools
import hmac
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from pixgate.accounts.queries import credentials as credential_rows
from pixgate.accounts.rules import certificates
from pixgate.accounts.rules.clients import AuthMethod
from pixgate.accounts.rules.scopes import ALL_SCOPES, Scope
from pixgate.accounts.rules.tokens import InvalidToken, Revocations
from pixgate.accounts.service.accounts import hash_secret
from pixgate.core.errors import (
    AuthUpstreamUnavailable,
    CertExpired,
    CertHeaderMissing,
    CertMalformedPem,
    CertNotAuthorizedForAccount,
    CertNotRegistered,
    CertNotYetValid,
    DatabaseUnavailable,
    InvalidCredentials,
    Unauthorized,
)
from pixgate.core.ids import client_id_of
from pixgate.runtime import Runtime

log = structlog.get_logger(__name__)

# Compared against when the clientId is unknown, so both failure paths do the same work.
_DUMMY_HASH = bytes(32)

# Revocations are kept this much longer than a token lives, for clocks that disagree.
_CLOCK_SKEW_S = 300


@dataclass(frozen=True, slots=True)
class IssuedToken:
    access_token: str
    expires_in: int
    scopes: frozenset[Scope] = ALL_SCOPES
    token_type: str = "Bearer"  # noqa: S105 - a token type, not a secret


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the account every query of the request is scoped to."""

    account_id: int
    client_id: str
    scopes: frozenset[Scope] = ALL_SCOPES


def read_certificate(header: str | None) -> certificates.ClientCertificate:
    """The certificate's first two checks: the header is there and holds a PEM certificate."""
    if not header:
        raise CertHeaderMissing("X-SSL-Client-Cert header is required")
    try:
        return certificates.from_header(header)
    except certificates.MalformedCertificate as exc:
        raise CertMalformedPem(f"X-SSL-Client-Cert is not a valid URL-encoded PEM: {exc}") from exc


def check_validity(cert: certificates.ClientCertificate) -> None:
    """The certificate's validity window holds the present. pixgate checks it itself: the TLS
    front passes on the certificates it could not verify, expired ones included, so that the
    client gets this answer rather than the front's.

    Judged on the wall clock, as the TLS handshake and the token's own expiry are, never on
    the runtime's clock: that is the business calendar (limit windows, charge expiries), which
    a sandbox may move, and moving it must not expire or revive a credential."""
    now = datetime.now(UTC)
    if cert.not_before > now:
        raise CertNotYetValid("certificate notBefore is in the future")
    if cert.not_after < now:
        raise CertExpired("certificate notAfter has passed")


async def issue_token(
    rt: Runtime,
    cert: certificates.ClientCertificate,
    client_id: uuid.UUID,
    client_secret: str | None,
    *,
    scopes: frozenset[Scope] = ALL_SCOPES,
) -> IssuedToken:
    """The remaining checks, in the spec's order, except that the certificate's account is
    compared after the secret (see `_authenticate`). `client_secret` is None when the client
    sent none (a `tls_client_auth` credential's request)."""
    check_validity(cert)
    try:
        async with rt.db.connection() as conn:
            registered = await credential_rows.active_certificate(conn, cert.fingerprint)
            if registered is None:
                raise CertNotRegistered("certificate fingerprint is not registered")
            credential = await credential_rows.active_credential(conn, client_id)
    except DatabaseUnavailable as exc:  # the token endpoint's code: credentials not checkable
        raise AuthUpstreamUnavailable("the credential store cannot be reached") from exc
    _authenticate(rt, credential, client_secret, registered.account_id)
    token = rt.signer.issue(
        client_id=str(client_id),
        account_id=registered.account_id,
        thumbprint=cert.thumbprint,
        now=datetime.now(UTC),  # the wall clock, as check_validity says
        ttl=rt.settings.token_ttl,
        scopes=scopes,
    )
    return IssuedToken(access_token=token, expires_in=rt.settings.token_ttl, scopes=scopes)


def _authenticate(
    rt: Runtime,
    credential: credential_rows.Credential | None,
    client_secret: str | None,
    certificate_account: int,
) -> None:
    """The client is who it says, by its secret or (`tls_client_auth`) by the registered
    certificate of its account; every refusal answers as an unknown clientId does.

    Only once a secret matched is a certificate of another account told apart (403): a
    foreign certificate with a known clientId and a wrong secret answers as an unknown
    clientId does, so the answer never tells which exist. A `tls_client_auth` credential has
    no secret to prove anything first, so a foreign certificate is simply not its proof.
    """
    if not _secret_matches(rt, credential, client_secret) or credential is None:
        raise InvalidCredentials("invalid clientId or clientSecret")
    if credential.account_id == certificate_account:
        return
    if credential.auth_method is AuthMethod.TLS_CLIENT_AUTH:
        raise InvalidCredentials("invalid clientId or clientSecret")
    raise CertNotAuthorizedForAccount("certificate is registered to another account")


def _secret_matches(
    rt: Runtime, credential: credential_rows.Credential | None, client_secret: str | None
) -> bool:
    """The secret sent is the credential's, or none was sent for a credential that has none.
    Every path makes the one HMAC and constant-time compare (against a dummy hash when there
    is nothing to compare), so an unknown clientId costs what a known one does."""
    stored = credential.secret_hash if credential is not None else None
    presented = hash_secret(rt.secret_hash_key, client_secret or "")
    matches = hmac.compare_digest(stored or _DUMMY_HASH, presented)
    if credential is not None and credential.auth_method is AuthMethod.TLS_CLIENT_AUTH:
        return client_secret is None
    return matches and stored is not None and client_secret is not None


async def sign_in(rt: Runtime, client_id: str, client_secret: str) -> Principal:
    """The token endpoint's credential checks without the certificate (the dashboard's
    sign-in): an unknown or malformed clientId and a wrong secret answer alike, and an unknown
    clientId costs the same secret comparison as a known one. A `tls_client_auth` credential
    has no secret, so it cannot sign in (its proof is a certificate the dashboard never sees):
    any secret sent for it is refused as a wrong one."""
    parsed = client_id_of(client_id)
    credential = None
    if parsed is not None:
        async with rt.db.connection() as conn:
            credential = await credential_rows.active_credential(conn, parsed)
    if not _secret_matches(rt, credential, client_secret) or credential is None:
        raise InvalidCredentials("invalid clientId or clientSecret")
    return Principal(account_id=credential.account_id, client_id=str(parsed))


async def signed_in(rt: Runtime, client_id: str) -> Principal | None:
    """The account of a dashboard session's credential, re-read on every page: None once the
    credential is revoked, so a revocation ends its sessions at the next request."""
    parsed = client_id_of(client_id)
    if parsed is None:
        return None
    async with rt.db.connection() as conn:
        credential = await credential_rows.active_credential(conn, parsed)
    if credential is None:
        return None
    return Principal(account_id=credential.account_id, client_id=str(parsed))


def authenticate(rt: Runtime, authorization: str | None, cert_header: str | None) -> Principal:
    """Verify `Authorization: Bearer` and its certificate binding (RFC 8705 section 3).

    Every token binds the certificate it was issued to (`cnf.x5t#S256`), so a request
    must present that same certificate: without one, a stolen token would work from any
    client that reaches the gateway. The certificate must also still be within its validity
    window, which a token can outlive.
    """
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing bearer token")
    try:
        claims = rt.signer.verify(token.strip())
    except InvalidToken as exc:
        raise Unauthorized("invalid or expired token") from exc
    if not cert_header:
        raise Unauthorized("token is bound to a client certificate; none was presented")
    try:
        presented = _certificate_of_header(cert_header)
    except certificates.MalformedCertificate as exc:
        raise Unauthorized("unreadable client certificate") from exc
    if not hmac.compare_digest(presented.thumbprint, claims.thumbprint):
        raise Unauthorized("token is bound to another certificate")
    try:
        check_validity(presented)
    except (CertNotYetValid, CertExpired) as exc:
        raise Unauthorized(f"the token's certificate is not valid now: {exc.text}") from exc
    if rt.revocations.refuses(claims):
        raise Unauthorized("token was revoked")
    return Principal(account_id=claims.account_id, client_id=claims.client_id, scopes=claims.scopes)


async def refresh_revocations(rt: Runtime) -> None:
    """Re-read what was revoked while a token issued before it could still be unexpired."""
    window = rt.settings.token_ttl + _CLOCK_SKEW_S
    async with rt.db.connection() as conn:
        clients, fingerprints = await credential_rows.revoked_since(conn, window)
    rt.revocations = Revocations(
        client_ids=frozenset(clients),
        thumbprints=frozenset(certificates.thumbprint_of(f) for f in fingerprints),
    )


async def watch_revocations(rt: Runtime) -> None:
    """Keep this process's revocations current until cancelled.

    Token checks read no database, so each API process re-reads the revocations every
    `revocation_poll_s` (one indexed query a second, not one per request): a credential or
    certificate revoked by any process or the CLI ends its tokens everywhere within that.
    A poll rather than LISTEN/NOTIFY, because a notification sent while the listening
    connection is down is lost, and the bound must hold then too. While the database is
    unreachable the last list stays in force.
    """
    while True:
        try:
            await refresh_revocations(rt)
        except Exception as exc:  # this loop must outlive any failure, or revocations stop
            log.warning("revocations.refresh_failed", error=str(exc))
        await asyncio.sleep(rt.settings.revocation_poll_s)


@functools.lru_cache(maxsize=4096)
def _certificate_of_header(cert_header: str) -> certificates.ClientCertificate:
    """Parsing X.509 costs more than the token check; a client sends the same header each time."""
    return certificates.from_header(cert_header)
