"""Rate limits: every 429 says when to come back, and a shared storage holds one limit
across API processes."""

from __future__ import annotations

import uuid

import httpx
import pytest
import redis

from pixgate.accounts.service import accounts
from pixgate.runtime import Runtime
from tests.helpers import cert_header, make_account
from tests.processes import serving_many

REDIS_URL = "redis://127.0.0.1:6379"


async def _token(
    client: httpx.AsyncClient, account: accounts.NewAccount, base: str = ""
) -> httpx.Response:
    return await client.post(
        f"{base}/api/auth/token",
        json={"clientId": account.client_id, "clientSecret": account.client_secret},
        headers={"X-SSL-Client-Cert": cert_header(account.certificate_pem)},
    )


def _assert_limited(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert 1 <= int(response.headers["retry-after"]) <= 60
    body = response.json()
    assert body["code"] == "RATE_LIMITED"
    assert body["details"] == {"retryAfter": int(response.headers["retry-after"])}


async def test_token_requests_are_limited_per_certificate(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    rt.settings = rt.settings.model_copy(update={"token_rate_limit": "3/minute"})
    account, other = await make_account(rt), await make_account(rt, name="Outra")
    assert [(await _token(client, account)).status_code for _ in range(3)] == [201] * 3
    _assert_limited(await _token(client, account))
    assert (await _token(client, other)).status_code == 201, "the limit is per certificate"


async def test_unreachable_storage_lets_requests_through(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    """A rate limit protects the gateway; Redis being down must not take the gateway down."""
    rt.settings = rt.settings.model_copy(
        update={"token_rate_limit": "1/minute", "rate_limit_storage": "redis://127.0.0.1:1"}
    )
    account = await make_account(rt)
    assert [(await _token(client, account)).status_code for _ in range(2)] == [201, 201]


@pytest.fixture
def redis_prefix() -> str:
    try:
        redis.Redis.from_url(REDIS_URL).ping()
    except redis.ConnectionError:
        pytest.fail(f"this test needs Redis at {REDIS_URL} (.ci/run starts it)")
    return f"pixgate-test-{uuid.uuid4().hex}"


async def test_two_processes_share_one_limit_through_redis(
    rt: Runtime, database_url: str, redis_prefix: str
) -> None:
    account = await make_account(rt)
    settings = {
        "rate_limit_storage": REDIS_URL,
        "rate_limit_prefix": redis_prefix,
        "token_rate_limit": "4/minute",
    }
    with serving_many(2, database_url, **settings) as bases:
        async with httpx.AsyncClient(timeout=5) as http:
            statuses = [(await _token(http, account, bases[i % 2])).status_code for i in range(4)]
            assert statuses == [201] * 4
            for base in bases:
                _assert_limited(await _token(http, account, base))
