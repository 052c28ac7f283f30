"""A real `pixgate serve` (API and worker) on a database of its own for the client's tests,
and a fresh account for each test, so tests share the server but no state."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from pixgate.accounts.service import accounts
from pixgate.client import AsyncClient, Client
from pixgate.core.settings import Settings
from pixgate.ledger.service import verify
from pixgate.runtime import Runtime, build_runtime
from tests.conftest import scratch_database
from tests.helpers import make_account
from tests.processes import PIXGATE, running, server_env

GATEWAY_SETTINGS = {
    "settlement_delay_ms": "0",
    # The server reads the wall clock: between 20:00 and 06:00 in Brasília the night limit
    # (1000.00 by default) would refuse a cash-out a test means to be refused for its balance.
    "default_night_limit": "500000.00",
    "webhook_api_enabled": "true",
    "allow_insecure_webhooks": "true",
}


@pytest.fixture(scope="session")
def client_database() -> Iterator[str]:
    with scratch_database() as url:
        yield url


@pytest.fixture(scope="session")
async def client_runtime(client_database: str) -> AsyncIterator[Runtime]:
    """Makes the accounts; at the end, the ledger of everything the tests did must balance."""
    settings = Settings(database_url=client_database, db_pool_min=1, db_pool_max=4)
    async with build_runtime(settings, client_database) as runtime:
        yield runtime
        async with runtime.db.connection() as conn:
            assert await verify.problems(conn) == []


@pytest.fixture(scope="session")
def gateway(client_database: str) -> Iterator[str]:
    """The base URL of a `pixgate serve` with its job worker, settling at once."""
    env = server_env(client_database, **GATEWAY_SETTINGS)
    with running([PIXGATE, "serve"], env) as base:
        yield base


@pytest.fixture
async def account(client_runtime: Runtime) -> accounts.NewAccount:
    return await make_account(client_runtime, balance="1000")


def signed_in(gateway: str, account: accounts.NewAccount) -> tuple[str, str, str]:
    """A client's first arguments for `account`: the base URL and its credential."""
    return gateway, account.client_id, account.client_secret


@pytest.fixture
def client(gateway: str, account: accounts.NewAccount) -> Iterator[Client]:
    with Client(*signed_in(gateway, account), cert_header_pem=account.certificate_pem) as c:
        yield c


@pytest.fixture
async def async_client(gateway: str, account: accounts.NewAccount) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(
        *signed_in(gateway, account), cert_header_pem=account.certificate_pem
    ) as c:
        yield c
