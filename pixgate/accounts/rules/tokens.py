"""Access tokens: EdDSA-signed JWTs bound to the client certificate (RFC 8705).

Only EdDSA is accepted on verification, so `alg: none` and algorithm confusion are
refused by construction.

PyJWT is imported where a token is made or read, not with the module: every runtime holds a
`TokenSigner`, and the commands of the CLI, which never see a token, would otherwise load
PyJWT and the `urllib.request` it imports (about a tenth of a second) on every run.
"""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

from pixgate.accounts.rules.scopes import ALL_SCOPES, Scope, as_text, of_claim

ALGORITHM = "EdDSA"
VERIFIED_TOKENS = 10_000


class InvalidToken(Exception):
    """Any reason a bearer token is not accepted; the reason goes to logs, not clients."""


@dataclass(frozen=True, slots=True)
class TokenClaims:
    client_id: str
    account_id: int
    thumbprint: str
    expires_at: int
    scopes: frozenset[Scope] = ALL_SCOPES


@dataclass(frozen=True, slots=True)
class Revocations:
    """Credentials (clientIds) and certificates (thumbprints) whose tokens are refused."""

    client_ids: frozenset[str] = frozenset()
    thumbprints: frozenset[str] = frozenset()

    def refuses(self, claims: TokenClaims) -> bool:
        return claims.client_id in self.client_ids or claims.thumbprint in self.thumbprints


class TokenSigner:
    """Holds the key pair; the public half is cached so verification costs one signature check."""

    def __init__(self, private_key: Ed25519PrivateKey, *, issuer: str, audience: str) -> None:
        self._private = private_key
        self._public: Ed25519PublicKey = private_key.public_key()
        raw = self._public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.kid = base64.urlsafe_b64encode(hashlib.sha256(raw).digest()[:12]).decode()
        self._raw_public = raw
        self.issuer = issuer
        self.audience = audience
        self._verified: dict[str, TokenClaims] = {}

    @staticmethod
    def generate_pem() -> str:
        key = Ed25519PrivateKey.generate()
        return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()

    @classmethod
    def from_pem(cls, pem: str, *, issuer: str, audience: str) -> TokenSigner:
        key = load_pem_private_key(pem.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("the JWT signing key must be an Ed25519 private key")
        return cls(key, issuer=issuer, audience=audience)

    def issue(
        self,
        *,
        client_id: str,
        account_id: int,
        thumbprint: str,
        now: datetime,
        ttl: int,
        scopes: frozenset[Scope] = ALL_SCOPES,
    ) -> str:
        import jwt

        iat = int(now.timestamp())
        claims = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": client_id,
            "acc": account_id,
            "iat": iat,
            "nbf": iat,
            "exp": iat + ttl,
            "jti": str(uuid.uuid4()),
            "cnf": {"x5t#S256": thumbprint},
            "scope": as_text(scopes),
        }
        return jwt.encode(claims, self._private, algorithm=ALGORITHM, headers={"kid": self.kid})

    def verify(self, token: str, *, now: float | None = None) -> TokenClaims:
        """The token's claims, or InvalidToken.

        A client sends the same token for up to its lifetime, and the signature check is the
        largest cost of a balance read; so a token verified once is remembered (by its exact
        text, at most VERIFIED_TOKENS of them) until it expires. What can change meanwhile is
        checked on every request by the caller: the certificate binding and revocations.
        """
        current = time.time() if now is None else now
        known = self._verified.get(token)
        if known is not None:
            if current < known.expires_at:
                return known
            del self._verified[token]
            raise InvalidToken("expired")
        claims = self._check(token)
        if len(self._verified) >= VERIFIED_TOKENS:
            del self._verified[next(iter(self._verified))]  # the oldest goes first
        self._verified[token] = claims
        return claims

    def _check(self, token: str) -> TokenClaims:
        import jwt

        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._public,
                algorithms=[ALGORITHM],
                audience=self.audience,
                issuer=self.issuer,
                options={"require": ["exp", "iat", "sub", "aud", "iss", "jti"]},
            )
            thumbprint = claims["cnf"]["x5t#S256"]
            account_id = claims["acc"]
            scopes = of_claim(claims.get("scope"))
        except (jwt.PyJWTError, KeyError, TypeError, ValueError) as exc:
            raise InvalidToken(str(exc)) from exc
        if not isinstance(account_id, int) or not isinstance(thumbprint, str):
            raise InvalidToken("malformed claims")
        return TokenClaims(
            client_id=str(claims["sub"]),
            account_id=account_id,
            thumbprint=thumbprint,
            expires_at=int(claims["exp"]),
            scopes=scopes,
        )

    def jwks(self) -> dict[str, Any]:
        x = base64.urlsafe_b64encode(self._raw_public).rstrip(b"=").decode()
        return {
            "keys": [
                {
                    "kty": "OKP",
                    "crv": "Ed25519",
                    "x": x,
                    "kid": self.kid,
                    "alg": ALGORITHM,
                    "use": "sig",
                }
            ]
        }
