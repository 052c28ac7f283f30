"""The token endpoint's OAuth 2.0 form: the client-credentials request that Central Bank API
Pix clients send (RFC 6749 sections 2.3 and 4.4, RFC 8705 section 2.1) and its refusals
(RFC 6749 section 5.2).

A form request is answered in OAuth 2.0's shapes throughout: 200 with the granted `scope`, or
`{error, error_description}` (400, and 401 for `invalid_client`). The refusals that are not
OAuth 2.0's to describe (the rate limit's 429, the credential store's 503, a body over the
limit) keep the spec's envelope, as a JSON request gets them.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import parse_qsl, unquote_plus

from starlette.datastructures import Headers

from pixgate.accounts.rules import scopes
from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.schemas.auth import OAuthTokenResponse
from pixgate.accounts.service.auth import IssuedToken
from pixgate.core import errors
from pixgate.core.http.responses import JSONResponse

GRANT_TYPE = "client_credentials"
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
_BASIC_CHALLENGE = 'Basic realm="pixgate", charset="UTF-8"'


class OAuthError(StrEnum):
    INVALID_REQUEST = "invalid_request"
    INVALID_CLIENT = "invalid_client"
    UNSUPPORTED_GRANT_TYPE = "unsupported_grant_type"
    INVALID_SCOPE = "invalid_scope"


class Refusal(Exception):
    """A form request refused with one of RFC 6749's error codes."""

    def __init__(self, error: OAuthError, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


# The token endpoint's own refusals, as RFC 6749 and RFC 8705 name them: a certificate that
# is missing or unreadable leaves the request without what binds the token (malformed); one
# outside its dates, not registered, or registered to another account fails the client.
_AS_OAUTH: dict[type[errors.PixgateError], OAuthError] = {
    errors.CertHeaderMissing: OAuthError.INVALID_REQUEST,
    errors.CertMalformedPem: OAuthError.INVALID_REQUEST,
    errors.CertNotYetValid: OAuthError.INVALID_CLIENT,
    errors.CertExpired: OAuthError.INVALID_CLIENT,
    errors.CertNotRegistered: OAuthError.INVALID_CLIENT,
    errors.InvalidCredentials: OAuthError.INVALID_CLIENT,
    errors.CertNotAuthorizedForAccount: OAuthError.INVALID_CLIENT,
}


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """A form request, read: its client, the secret it sent (None: none, as a
    `tls_client_auth` client sends), and the scopes it is granted."""

    client_id: uuid.UUID
    client_secret: str | None
    scopes: frozenset[Scope]


def is_form(headers: Headers) -> bool:
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/x-www-form-urlencoded"


def uses_basic(headers: Headers) -> bool:
    """The client authenticates by HTTP Basic (RFC 6749 2.3.1): its refusal says so."""
    return headers.get("authorization", "").split(" ", 1)[0].lower() == "basic"


def read(headers: Headers, raw: bytes) -> ClientCredentials:
    """The form's grant, client and scope, or the first thing wrong with them."""
    form = _fields(raw)
    grant_type = form.get("grant_type")
    if grant_type is None:
        raise Refusal(OAuthError.INVALID_REQUEST, "grant_type is required")
    if grant_type != GRANT_TYPE:
        raise Refusal(OAuthError.UNSUPPORTED_GRANT_TYPE, "grant_type must be client_credentials")
    client_id, client_secret = _client(headers, form)
    try:
        granted = scopes.granted(form.get("scope"))
    except scopes.UnknownScope as exc:
        raise Refusal(OAuthError.INVALID_SCOPE, str(exc)) from exc
    return ClientCredentials(_client_id(client_id), client_secret, granted)


def refusal_of(exc: errors.PixgateError) -> Refusal | None:
    """The OAuth 2.0 error of one of the token endpoint's refusals; None for those that keep
    the spec's envelope (429, 503)."""
    error = _AS_OAUTH.get(type(exc))
    return None if error is None else Refusal(error, exc.text)


def issued(token: IssuedToken) -> JSONResponse:
    body = OAuthTokenResponse(
        access_token=token.access_token,
        token_type=token.token_type,
        expires_in=token.expires_in,
        scope=scopes.as_text(token.scopes),
    )
    return JSONResponse(body.model_dump(), headers=_NO_STORE)


def refused(refusal: Refusal, *, basic: bool) -> JSONResponse:
    """RFC 6749 5.2: 400, or 401 for a client that failed to authenticate, challenged to
    Basic when it tried Basic."""
    headers = dict(_NO_STORE)
    status = 400
    if refusal.error is OAuthError.INVALID_CLIENT:
        status = 401
        if basic:
            headers["WWW-Authenticate"] = _BASIC_CHALLENGE
    body = {"error": refusal.error.value, "error_description": _described(refusal.description)}
    return JSONResponse(body, status_code=status, headers=headers)


def _fields(raw: bytes) -> dict[str, str]:
    """The form's parameters; one sent without a value counts as omitted, and one sent twice
    is refused (RFC 6749 3.2)."""
    form: dict[str, str] = {}
    for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        if not value:
            continue
        if name in form:
            raise Refusal(OAuthError.INVALID_REQUEST, f"{name} is repeated")
        form[name] = value
    return form


def _client(headers: Headers, form: dict[str, str]) -> tuple[str, str | None]:
    """The clientId and the secret sent, by HTTP Basic or by the form's fields, never both
    (RFC 6749 2.3.1: one authentication mechanism per request)."""
    if not uses_basic(headers):
        client_id = form.get("client_id")
        if client_id is None:
            raise Refusal(OAuthError.INVALID_CLIENT, "no client authentication included")
        return client_id, form.get("client_secret")
    user, password = _basic(headers.get("authorization", ""))
    if "client_secret" in form:
        raise Refusal(OAuthError.INVALID_REQUEST, "the client authenticated by Basic and form")
    if form.get("client_id", user) != user:
        raise Refusal(OAuthError.INVALID_REQUEST, "client_id differs from the Basic user")
    return user, password


def _basic(authorization: str) -> tuple[str, str]:
    """`Basic base64(urlencoded(client_id):urlencoded(client_secret))`, RFC 6749 2.3.1."""
    encoded = authorization.partition(" ")[2].strip()
    try:
        pair = base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise Refusal(OAuthError.INVALID_CLIENT, "malformed Basic credentials") from exc
    user, colon, password = pair.partition(":")
    if not colon:
        raise Refusal(OAuthError.INVALID_CLIENT, "malformed Basic credentials")
    return unquote_plus(user), unquote_plus(password)


def _client_id(value: str) -> uuid.UUID:
    """A clientId is a UUID v4 in its 36-character form (the spec's rule); any other is a
    client this gateway never issued."""
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.version != 4 or len(value) != 36:
        raise Refusal(OAuthError.INVALID_CLIENT, "invalid client_id or client_secret")
    return parsed


def _described(text: str) -> str:
    """`error_description` holds printable ASCII but `"` and `\\` (RFC 6749 5.2)."""
    return "".join(c if " " <= c <= "~" and c not in '"\\' else " " for c in text)
