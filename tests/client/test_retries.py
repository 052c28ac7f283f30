"""What the client sends again, against real conditions: a rate limit spent (429), the
database out of reach (503), the gateway gone (network errors); and what it never does."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from urllib.parse import urlparse

import httpx
import pytest

from pixgate.accounts.service import accounts
from pixgate.client import Client, RetryPolicy, errors
from pixgate.sandbox.schemas import SandboxPayRequest
from tests.client import builders
from tests.client.conftest import signed_in
from tests.client.counting import Seen
from tests.client.cut_line import line_to
from tests.processes import PIXGATE, SERVE, running, server_env

QUICK = RetryPolicy(attempts=3, backoff=0.01)


@pytest.fixture(scope="module")
def rate_limited(client_database: str) -> Iterator[str]:
    """A gateway whose MED list takes 2 calls a second, and its token endpoint 2 a minute
    per certificate."""
    env = server_env(client_database, med_rate_limit="2/second", token_rate_limit="2/minute")
    with running(SERVE, env) as base:
        yield base


def test_a_429_is_sent_again_after_its_retry_after(
    rate_limited: str, account: accounts.NewAccount
) -> None:
    seen = Seen()
    with Client(
        *signed_in(rate_limited, account),
        cert_header_pem=account.certificate_pem,
        event_hooks=seen.hooks(),
    ) as client:
        for _ in range(3):
            assert list(client.med()) == []
    assert 429 in seen.statuses
    assert seen.statuses[-1] == 200
    assert seen.requests.count("/api/med") == 4


def test_a_retry_after_longer_than_max_wait_is_raised(
    rate_limited: str, account: accounts.NewAccount
) -> None:
    certificate = {"X-SSL-Client-Cert": builders.escaped(account.certificate_pem)}
    credentials = {"clientId": account.client_id, "clientSecret": account.client_secret}
    for _ in range(2):
        httpx.post(f"{rate_limited}/api/auth/token", headers=certificate, json=credentials)
    seen = Seen()
    with (
        Client(
            *signed_in(rate_limited, account),
            cert_header_pem=account.certificate_pem,
            event_hooks=seen.hooks(),
        ) as client,
        pytest.raises(errors.RateLimited) as refused,
    ):
        client.balance()
    assert refused.value.status == 429 and refused.value.details["retryAfter"] > 30
    assert seen.token_requests == 1


def test_network_errors_retry_only_what_cannot_be_done_twice(
    client_database: str, account: accounts.NewAccount
) -> None:
    seen = Seen()
    with running(SERVE, server_env(client_database)) as base:
        client = Client(
            *signed_in(base, account),
            cert_header_pem=account.certificate_pem,
            event_hooks=seen.hooks(),
            retry=QUICK,
        )
        charge = client.cash_in(builders.cash_in())
    with client:
        with pytest.raises(httpx.TransportError):
            client.balance()
        assert seen.requests.count("/api/balance") == 3
        with pytest.raises(httpx.TransportError):
            client.cash_out(builders.cash_out())
        assert seen.requests.count("/api/pix/cash-out") == 3
        with pytest.raises(httpx.TransportError):
            client.sandbox.pay(SandboxPayRequest(pixCode=charge.pix_code, payer=builders.payer()))
        assert seen.requests.count("/sandbox/pix/pay") == 1


def test_a_503_while_the_database_is_away_is_sent_again(client_database: str) -> None:
    """The gateway answers 503 with `Retry-After: 2` while its database is out of reach; the
    client waits that long and sends the request again, by which time it is back."""
    database = urlparse(client_database)
    with line_to(database.hostname or "127.0.0.1", database.port or 5432) as line:
        url = database._replace(netloc=f"{database.username}@127.0.0.1:{line.port}").geturl()
        created = subprocess.run(
            [PIXGATE, "accounts", "create", "--name", "Loja", "--balance", "100", "--json"],
            env=server_env(url),
            capture_output=True,
            check=True,
        )
        account = json.loads(created.stdout)
        seen = Seen()
        hooks = seen.hooks()
        hooks["response"].append(lambda answer: line.mend() if answer.status_code == 503 else None)
        with (
            running(SERVE, server_env(url)) as base,
            Client(
                base,
                account["clientId"],
                account["clientSecret"],
                cert_header_pem=account["certificatePem"],
                event_hooks=hooks,
            ) as client,
        ):
            client.balance()
            line.cut()
            assert client.balance().net_balance == Decimal("100.00")
    assert seen.statuses == [201, 200, 503, 200]


@pytest.mark.parametrize(
    ("retry_safe", "status", "retry_after", "attempt", "delay"),
    [
        (True, 503, "2", 1, 2.0),
        (True, 429, None, 2, 1.0),
        (True, 429, "31", 1, None),
        (True, 503, "1", 3, None),
        (False, 503, "1", 1, None),
        (True, 500, None, 1, None),
        (True, 400, None, 1, None),
    ],
)
def test_the_policy_waits_only_for_what_is_safe_and_bounded(
    retry_safe: bool, status: int, retry_after: str | None, attempt: int, delay: float | None
) -> None:
    assert RetryPolicy().after_answer(retry_safe, attempt, status, retry_after) == delay
