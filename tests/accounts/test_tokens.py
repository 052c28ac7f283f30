"""Verified tokens are remembered until they expire, and never past it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pixgate.accounts.rules import tokens
from pixgate.accounts.rules.tokens import InvalidToken, TokenSigner


def _signer() -> TokenSigner:
    return TokenSigner.from_pem(TokenSigner.generate_pem(), issuer="pixgate", audience="api")


def _token(signer: TokenSigner, ttl: int = 1800) -> str:
    return signer.issue(client_id="c", account_id=7, thumbprint="t", now=datetime.now(UTC), ttl=ttl)


def test_a_verified_token_is_remembered_until_it_expires() -> None:
    signer = _signer()
    token = _token(signer)
    first = signer.verify(token)
    assert signer.verify(token) is first, "the second check is the remembered one"
    assert signer.verify(token, now=first.expires_at - 1) is first
    with pytest.raises(InvalidToken, match="expired"):
        signer.verify(token, now=first.expires_at)
    assert token not in signer._verified, "an expired token is forgotten"


def test_a_tampered_token_is_checked_not_remembered() -> None:
    signer = _signer()
    token = _token(signer)
    signer.verify(token)
    header, payload, signature = token.split(".")
    # a character inside the signature: all six of its bits are signature bits, unlike the
    # last one's padding bits, so any other character is another signature
    swapped = "B" if signature[10] == "A" else "A"
    with pytest.raises(InvalidToken):
        signer.verify(f"{header}.{payload}.{signature[:10]}{swapped}{signature[11:]}")


def test_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "VERIFIED_TOKENS", 3)
    signer = _signer()
    issued = [_token(signer) for _ in range(5)]
    for token in issued:
        signer.verify(token)
    assert list(signer._verified) == issued[2:]
