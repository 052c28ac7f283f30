"""How a client credential authenticates at the token endpoint (RFC 8705 section 2)."""

from __future__ import annotations

from enum import StrEnum


class AuthMethod(StrEnum):
    """`client_secret`: the spec's clientId and clientSecret (by JSON, HTTP Basic or form
    fields), the certificate binding the token. `tls_client_auth` (RFC 8705 section 2.1): the
    clientId alone, the client authenticated by its account's registered certificate."""

    CLIENT_SECRET = "client_secret"  # noqa: S105 - a method's name, not a secret
    TLS_CLIENT_AUTH = "tls_client_auth"
