"""JSON Web Key Sets (RFC 7517): GET /.well-known/jwks.json and /.well-known/pix-jwks.json.

The members are the RFC's, named as it names them; the key material (`x` and `crv` of an
Ed25519 key, `n` and `e` of an RSA key) is kept as the signer gives it.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from pixgate.core.http.schemas import ApiModel


class JsonWebKey(ApiModel):
    model_config = ConfigDict(extra="allow")

    kty: str
    kid: str
    alg: str
    use: str


class JsonWebKeySet(ApiModel):
    keys: list[JsonWebKey]

    @classmethod
    def of(cls, jwks: dict[str, Any]) -> JsonWebKeySet:
        return cls.model_validate(jwks)
