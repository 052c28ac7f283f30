"""The location signer's key: parsed once per PEM, RSA only."""

from __future__ import annotations

import jwt
import pytest

from pixgate.accounts.rules.tokens import TokenSigner
from pixgate.charges.rules.location_jws import LocationSigner


def test_signers_from_one_pem_share_the_parsed_key_and_verify_each_other() -> None:
    pem = LocationSigner.generate_pem()
    first, second = LocationSigner.from_pem(pem), LocationSigner.from_pem(pem)
    assert first._private is second._private
    assert first.kid == second.kid
    token = first.sign({"txid": "abc"}, jku="https://pix.example/jwks")
    public = jwt.PyJWK(second.jwks()["keys"][0]).key
    assert jwt.decode(token, public, algorithms=["PS256"]) == {"txid": "abc"}


def test_another_pem_is_another_key() -> None:
    first = LocationSigner.from_pem(LocationSigner.generate_pem())
    second = LocationSigner.from_pem(LocationSigner.generate_pem())
    assert first.kid != second.kid


def test_a_key_that_is_not_rsa_is_refused() -> None:
    with pytest.raises(ValueError, match="must be an RSA private key"):
        LocationSigner.from_pem(TokenSigner.generate_pem())
