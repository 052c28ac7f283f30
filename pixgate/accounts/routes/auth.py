"""POST /api/auth/token and its alias POST /oauth/token, JSON or OAuth 2.0 form.

The body is read by hand because the endpoint takes JSON (the spec) and the OAuth 2.0
client-credentials form (RFC 6749 4.4) that Central Bank API Pix clients send, and
because the certificate checks come before the body's.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from typing import Any
from urllib.parse import parse_qs, unquote_plus

import orjson
from fastapi import APIRouter, Header, Request, Response
from pydantic import ValidationError

from pixgate.accounts.routes.deps import RuntimeDep
from pixgate.accounts.schemas.auth import TokenRequest, TokenResponse
from pixgate.accounts.service import auth
from pixgate.core import errors
from pixgate.core.http import rate_limit
from pixgate.core.http.errors import EnvelopeRoute, openapi_responses


class TokenRoute(EnvelopeRoute):
    """Also takes the OAuth 2.0 form body, so the JSON-only check skips it; a token request,
    JSON or form, is a few hundred bytes."""

    form_body_bytes = 8 * 1024


router = APIRouter(route_class=TokenRoute, tags=["auth"])

_TOKEN_ERRORS = openapi_responses(
    errors.CertHeaderMissing,
    errors.CertMalformedPem,
    errors.RequestBodyInvalid,
    errors.CertNotYetValid,
    errors.CertExpired,
    errors.CertNotRegistered,
    errors.InvalidCredentials,
    errors.CertNotAuthorizedForAccount,
    errors.RateLimited,
    errors.AuthUpstreamUnavailable,
)
_BODY_SCHEMA: dict[str, Any] = {
    # The header is read by hand (its checks come first and answer their own codes), so
    # FastAPI does not see it: declared here, required: the token is bound to it.
    "parameters": [
        {
            "name": "X-SSL-Client-Cert",
            "in": "header",
            "required": True,
            "description": "The client certificate's PEM, percent-encoded (RFC 3986) as "
            "nginx's `$ssl_client_escaped_cert` sends it; set by the TLS front from the "
            "handshake. Missing: 400 PUB_CERT_HEADER_MISSING.",
            "schema": {"type": "string"},
        }
    ],
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": TokenRequest.model_json_schema()},
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "required": ["grant_type"],
                    "properties": {
                        "grant_type": {"type": "string", "enum": ["client_credentials"]},
                        "client_id": {"type": "string"},
                        "client_secret": {"type": "string"},
                        "scope": {"type": "string"},
                    },
                }
            },
        },
    },
}


@router.post(
    "/api/auth/token",
    status_code=201,
    response_model=TokenResponse,
    responses=_TOKEN_ERRORS,
    openapi_extra=_BODY_SCHEMA,
    summary="Issue an access token",
)
@router.post(
    "/oauth/token",
    status_code=201,
    response_model=TokenResponse,
    responses=_TOKEN_ERRORS,
    openapi_extra=_BODY_SCHEMA,
    summary="Issue an access token (OAuth 2.0 alias)",
)
async def issue_token(
    request: Request,
    rt: RuntimeDep,
    response: Response,
    x_ssl_client_cert: str | None = Header(default=None, include_in_schema=False),
) -> TokenResponse:
    cert = auth.read_certificate(x_ssl_client_cert)
    await rate_limit.enforce(
        request, rt, rate_limit.item(rt.settings.token_rate_limit), "token", cert.fingerprint
    )
    body = _credentials(request, await request.body())
    token = await auth.issue_token(rt, cert, uuid.UUID(body.clientId), body.clientSecret)
    response.headers["Cache-Control"] = "no-store"
    return TokenResponse(
        access_token=token.access_token, token_type=token.token_type, expires_in=token.expires_in
    )


def _credentials(request: Request, raw: bytes) -> TokenRequest:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media == "application/x-www-form-urlencoded":
        data = _from_form(request, raw)
    else:
        try:
            data = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError as exc:
            raise _invalid([{"field": "body", "message": "malformed JSON"}]) from exc
        if not isinstance(data, dict):
            raise _invalid([{"field": "body", "message": "body must be a JSON object"}])
    try:
        return TokenRequest.model_validate(data)
    except ValidationError as exc:
        raise _invalid(
            [
                {"field": ".".join(str(p) for p in e["loc"]) or "body", "message": e["msg"]}
                for e in exc.errors()
            ]
        ) from exc


def _from_form(request: Request, raw: bytes) -> dict[str, Any]:
    """RFC 6749 4.4: grant_type=client_credentials, the client by Basic auth or form fields."""
    form = {k: v[0] for k, v in parse_qs(raw.decode("latin-1"), keep_blank_values=True).items()}
    if form.get("grant_type") != "client_credentials":
        raise errors.UnsupportedGrantType("grant_type must be client_credentials")
    client_id, client_secret = form.get("client_id"), form.get("client_secret")
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "basic":
        try:
            pair = base64.b64decode(encoded, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise _invalid([{"field": "authorization", "message": "malformed Basic"}]) from exc
        user, _, password = pair.partition(":")
        client_id, client_secret = unquote_plus(user), unquote_plus(password)
    body: dict[str, Any] = {}
    if client_id is not None:
        body["clientId"] = client_id
    if client_secret is not None:
        body["clientSecret"] = client_secret
    return body


def _invalid(violations: list[dict[str, str]]) -> errors.RequestBodyInvalid:
    return errors.RequestBodyInvalid(
        [f"{v['field']}: {v['message']}" for v in violations],
        details={"violations": violations},
    )
