"""How the client proves who it is: the certificate (real mTLS, or the header a TLS front
would send) and the bearer token it obtains and renews itself."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from urllib.parse import quote

from pixgate.accounts.schemas.auth import TokenRequest, TokenResponse
from pixgate.client.calls import Call, reader

CERT_HEADER = "X-SSL-Client-Cert"
RENEW_BEFORE = 30.0
"""Seconds before its expiry that a token is renewed: the margin the spec recommends."""


def escaped_cert(pem: str) -> str:
    """The PEM as nginx's `$ssl_client_escaped_cert` sends it: RFC 3986 percent-encoding
    (a `+` of the base64 body becomes `%2B`, a space `%20`)."""
    return quote(pem, safe="")


def tls_context(cert: tuple[str, str], verify: bool | str | ssl.SSLContext) -> ssl.SSLContext:
    """An SSL context presenting the client certificate `cert` (certificate file, key file),
    trusting `verify`: the system's CAs (True), a CA bundle file, or a context of one's own."""
    if isinstance(verify, ssl.SSLContext):
        context = verify
    elif isinstance(verify, str):
        context = ssl.create_default_context(cafile=verify)
    else:
        context = ssl.create_default_context()
        if not verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
    context.load_cert_chain(*cert)
    return context


def token_call(client_id: str, client_secret: str) -> Call[TokenResponse]:
    """`POST /api/auth/token`. Retried like a read: a token more or less changes nothing."""
    return Call(
        "POST",
        "/api/auth/token",
        reader(TokenResponse),
        body=TokenRequest(clientId=client_id, clientSecret=client_secret),
        retry_safe=True,
        authenticated=False,
    )


@dataclass(frozen=True)
class Token:
    value: str
    renew_at: float
    """The monotonic clock's reading after which this token is renewed before use."""

    @classmethod
    def issued(cls, answer: TokenResponse, now: float, renew_before: float) -> Token:
        return cls(answer.access_token, now + answer.expires_in - renew_before)

    def fresh(self, now: float) -> bool:
        return now < self.renew_at
