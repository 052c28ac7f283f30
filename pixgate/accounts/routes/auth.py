"""POST /api/auth/token and its alias POST /oauth/token, JSON or OAuth 2.0 form.

The body is read by hand because the endpoint takes JSON (the spec) and the OAuth 2.0
client-credentials form (RFC 6749 4.4) that Central Bank API Pix clients send, and
because the certificate checks come before the body's. A JSON request is answered in the
spec's shapes (201, the envelope); a form request in OAuth 2.0's (`routes.oauth`).
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson
from fastapi import APIRouter, Header, Request, Response
from pydantic import ValidationError

from pixgate.accounts.routes import oauth
from pixgate.accounts.routes.deps import RuntimeDep
from pixgate.accounts.rules import certificates
from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.schemas.auth import (
    OAuthTokenResponse,
    TokenError,
    TokenRequest,
    TokenResponse,
)
from pixgate.accounts.service import auth
from pixgate.core import errors
from pixgate.core.http import rate_limit
from pixgate.core.http.errors import EnvelopeRoute, openapi_responses
from pixgate.runtime import Runtime


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
_TOKEN_RESPONSES: dict[int | str, dict[str, Any]] = {
    **_TOKEN_ERRORS,
    200: {
        "model": OAuthTokenResponse,
        "description": "The answer to the OAuth 2.0 form (RFC 6749 5.1), with the scopes "
        "granted; a JSON request is answered 201.",
    },
    400: {
        "model": TokenError,
        "description": _TOKEN_ERRORS[400]["description"] + ". To a form request (RFC 6749 "
        "5.2): invalid_request, unsupported_grant_type, invalid_scope.",
    },
    401: {
        "model": TokenError,
        "description": _TOKEN_ERRORS[401]["description"] + ". To a form request: "
        "invalid_client, with `WWW-Authenticate: Basic` when the client used Basic.",
    },
}
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
                        "client_id": {
                            "type": "string",
                            "description": "or the user of HTTP Basic (RFC 6749 2.3.1)",
                        },
                        "client_secret": {
                            "type": "string",
                            "description": "or the password of HTTP Basic; none for a "
                            "`tls_client_auth` credential (RFC 8705 2.1)",
                        },
                        "scope": {
                            "type": "string",
                            "description": "space-separated scopes of the API Pix "
                            f"({', '.join(sorted(Scope))}); none: every scope",
                        },
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
    responses=_TOKEN_RESPONSES,
    openapi_extra=_BODY_SCHEMA,
    summary="Issue an access token",
)
@router.post(
    "/oauth/token",
    status_code=201,
    response_model=TokenResponse,
    responses=_TOKEN_RESPONSES,
    openapi_extra=_BODY_SCHEMA,
    summary="Issue an access token (OAuth 2.0 alias)",
)
async def issue_token(
    request: Request,
    rt: RuntimeDep,
    response: Response,
    x_ssl_client_cert: str | None = Header(default=None, include_in_schema=False),
) -> TokenResponse | Response:
    if oauth.is_form(request.headers):
        return await _issue_to_form(request, rt, x_ssl_client_cert)
    cert = await _certificate_counted(request, rt, x_ssl_client_cert)
    body = _credentials(await request.body())
    token = await auth.issue_token(rt, cert, uuid.UUID(body.clientId), body.clientSecret)
    response.headers["Cache-Control"] = "no-store"
    return TokenResponse(
        access_token=token.access_token, token_type=token.token_type, expires_in=token.expires_in
    )


async def _issue_to_form(request: Request, rt: Runtime, cert_header: str | None) -> Response:
    """The OAuth 2.0 form: the same checks in the same order, answered in RFC 6749's shapes."""
    try:
        cert = await _certificate_counted(request, rt, cert_header)
        form = oauth.read(request.headers, await request.body())
        token = await auth.issue_token(
            rt, cert, form.client_id, form.client_secret, scopes=form.scopes
        )
    except oauth.Refusal as refusal:
        return oauth.refused(refusal, basic=oauth.uses_basic(request.headers))
    except errors.PixgateError as exc:
        as_oauth = oauth.refusal_of(exc)
        if as_oauth is None:
            raise
        return oauth.refused(as_oauth, basic=oauth.uses_basic(request.headers))
    return oauth.issued(token)


async def _certificate_counted(
    request: Request, rt: Runtime, cert_header: str | None
) -> certificates.ClientCertificate:
    """The certificate read, then the request counted against its limit (before any secret is
    compared, so guessing is slow)."""
    cert = auth.read_certificate(cert_header)
    await rate_limit.enforce(
        request, rt, rate_limit.item(rt.settings.token_rate_limit), "token", cert.fingerprint
    )
    return cert


def _credentials(raw: bytes) -> TokenRequest:
    """The spec's JSON body."""
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


def _invalid(violations: list[dict[str, str]]) -> errors.RequestBodyInvalid:
    return errors.RequestBodyInvalid(
        [f"{v['field']}: {v['message']}" for v in violations],
        details={"violations": violations},
    )
