"""Signed charge payloads: what a payer's bank fetches from a charge's location (PS256 JWS).

The Central Bank's API Pix has the payer's PSP fetch the location URL and verify a JWS
whose header names the key (`kid`) and where to find it (`jku`, a JWKS we serve).

PyJWT is imported where a payload is signed, not with the module: every runtime (each CLI
command's too) holds this key, and PyJWT's import costs about a tenth of a second.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

ALGORITHM = "PS256"


@functools.lru_cache(maxsize=4)
def _private_key(pem: str) -> rsa.RSAPrivateKey:
    """The parsed key, kept per PEM: parsing checks the RSA key (tens of milliseconds), and
    every runtime a process builds (each CLI command) loads the same stored key."""
    key = load_pem_private_key(pem.encode(), password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("the location signing key must be an RSA private key")
    return key


class LocationSigner:
    def __init__(self, private_key: rsa.RSAPrivateKey) -> None:
        self._private = private_key
        public_der = private_key.public_key().public_bytes(
            Encoding.DER, PublicFormat.SubjectPublicKeyInfo
        )
        self.kid = base64.urlsafe_b64encode(hashlib.sha256(public_der).digest()[:12]).decode()

    @staticmethod
    def generate_pem() -> str:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()

    @classmethod
    def from_pem(cls, pem: str) -> LocationSigner:
        return cls(_private_key(pem))

    def sign(self, payload: dict[str, Any], *, jku: str) -> str:
        import jwt

        return jwt.encode(
            payload, self._private, algorithm=ALGORITHM, headers={"kid": self.kid, "jku": jku}
        )

    def jwks(self) -> dict[str, Any]:
        import jwt.algorithms

        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._private.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "alg": ALGORITHM, "use": "sig"}]}
