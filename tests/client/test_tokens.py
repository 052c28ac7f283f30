"""The client's token: obtained when first needed, by one caller while the others wait,
renewed ahead of its expiry and after a refusal; the token endpoint's refusals as their
classes."""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pixgate.accounts.service import accounts
from pixgate.client import Client, errors, operations
from pixgate.client.auth import Token
from tests.client.conftest import signed_in
from tests.client.counting import Seen
from tests.deploy.front import client_certificate, needs_nginx, nginx_front


def counted(
    gateway: str, account: accounts.NewAccount, seen: Seen, *, renew_before: float = 30
) -> Client:
    return Client(
        *signed_in(gateway, account),
        cert_header_pem=account.certificate_pem,
        event_hooks=seen.hooks(),
        renew_before=renew_before,
    )


def test_threads_calling_at_once_obtain_one_token(
    gateway: str, account: accounts.NewAccount
) -> None:
    seen = Seen()
    with counted(gateway, account, seen) as client, ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: client.balance(), range(24)))
    assert len(answers) == 24
    assert seen.token_requests == 1


def test_a_token_is_renewed_ahead_of_its_expiry(gateway: str, account: accounts.NewAccount) -> None:
    """Renewed `renew_before` seconds before it expires: with the token's whole lifetime
    (1800 s), each call finds it due and obtains another; with the default 30 s, none."""
    seen = Seen()
    with counted(gateway, account, seen, renew_before=1800) as client:
        client.balance()
        client.balance()
    assert seen.token_requests == 2
    seen = Seen()
    with counted(gateway, account, seen) as client:
        client.balance()
        client.balance()
    assert seen.token_requests == 1


def test_a_refused_token_is_renewed_once(gateway: str, account: accounts.NewAccount) -> None:
    seen = Seen()
    with counted(gateway, account, seen) as client:
        client.balance()
        client._session._token = Token("not-a-token", float("inf"))
        assert client.balance().net_balance == 1000
    assert seen.statuses == [201, 200, 401, 201, 200]


def test_the_token_endpoints_refusals_raise_their_classes(
    gateway: str, account: accounts.NewAccount
) -> None:
    wrong_secret = Client(
        gateway,
        account.client_id,
        "not-the-secret-0123456789",
        cert_header_pem=account.certificate_pem,
    )
    with wrong_secret, pytest.raises(errors.InvalidCredentials) as refused:
        wrong_secret.balances()
    assert (refused.value.status, refused.value.code) == (401, "PUB_INVALID_CREDENTIALS")
    stranger = client_certificate(starts=-dt.timedelta(days=1), ends=dt.timedelta(days=1))
    unknown = Client(*signed_in(gateway, account), cert_header_pem=stranger.certificate_pem)
    with unknown, pytest.raises(errors.CertNotRegistered):
        unknown.balances()


def test_each_method_shows_its_operations_docs() -> None:
    assert Client.cash_out.__doc__ == operations.cash_out.__doc__
    assert Client.transactions.__doc__ == operations.transactions.__doc__


def test_one_certificate_is_given() -> None:
    with pytest.raises(ValueError, match="give one of"):
        Client("http://127.0.0.1:1", "id", "secret")
    with pytest.raises(ValueError, match="give one of"):
        Client("http://127.0.0.1:1", "id", "secret", cert=("a", "b"), cert_header_pem="pem")


@needs_nginx
def test_a_certificate_presented_in_the_handshake_through_the_tls_front(
    gateway: str, account: accounts.NewAccount, tmp_path: Path
) -> None:
    certificate, key = tmp_path / "client.crt", tmp_path / "client.key"
    certificate.write_text(account.certificate_pem)
    key.write_text(account.private_key_pem)
    with (
        nginx_front(gateway) as front,
        Client(
            front.https,
            account.client_id,
            account.client_secret,
            cert=(str(certificate), str(key)),
            verify=str(front.ca_file),
        ) as client,
    ):
        assert client.balance().net_balance == 1000
