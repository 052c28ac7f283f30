"""Whom the statement shows as a cash-out's receiver in the sandbox: the name the integrator
sent for a key nobody registered, the registered holder for a key that is."""

from __future__ import annotations

import hashlib
import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account
from tests.payouts.test_dict_transfer import register_key
from tests.support import drain

CPF = "52998224725"
GUIDE = Path(__file__).parents[2] / "docs" / "guide.md"
GUIDE_BANKS = [
    row.groups()
    for row in re.finditer(
        r"^  \| \d \| `(\d{8})` \| ([^|]+?) \| (\d{3}) \|$", GUIDE.read_text(), re.M
    )
]
"""The sandbox banks as the guide's table lists them, in the order the key's hash picks."""
EVP = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"


async def pay(
    client: httpx.AsyncClient, headers: dict[str, str], *, key: str, key_type: str, name: str
) -> str:
    """A cash-out of 1.00 to `key`, its transactionId."""
    response = await client.post(
        "/api/pix/cash-out",
        headers=headers,
        json={
            "value": 1,
            "externalId": f"ext-{uuid.uuid4()}",
            "details": {"key": key, "keyType": key_type, "name": name, "document": CPF},
        },
    )
    assert response.status_code == 201, response.text
    return str(response.json()["transactionId"])


async def statement_counterpart(
    client: httpx.AsyncClient, headers: dict[str, str], transaction_id: str
) -> dict[str, Any]:
    """The settled cash-out's counterpart as GET /api/transactions shows it."""
    response = await client.get("/api/transactions", headers=headers)
    assert response.status_code == 200, response.text
    (item,) = [i for i in response.json()["data"] if i["transactionId"] == transaction_id]
    assert item["status"] == "Confirmado"
    counterpart: dict[str, Any] = item["counterpart"]
    return counterpart


@pytest.fixture
async def headers(rt: Runtime, client: httpx.AsyncClient) -> dict[str, str]:
    """A bearer of an account with 10.00 to pay out."""
    return await bearer(client, await make_account(rt, balance="10.00"))


class TestUnregisteredKey:
    async def test_the_statement_shows_the_name_sent_at_the_keys_bank(
        self, rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        first = await pay(client, headers, key=EVP, key_type="RANDOM", name="Maria Souza")
        second = await pay(client, headers, key=EVP, key_type="RANDOM", name="Joana Prado")
        await drain(rt)
        maria = await statement_counterpart(client, headers, first)
        joana = await statement_counterpart(client, headers, second)
        assert maria["name"] == "Maria Souza"
        assert maria["document"] == "***.982.247-**"
        assert joana["name"] == "Joana Prado"
        # the bank and account come from the key alone: the same for both payments
        assert maria["bank"] == joana["bank"]

    async def test_the_account_is_the_one_the_guide_derives_from_the_key(
        self, rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        """docs/guide.md, "Sandbox holders and documents": the first byte of the key's
        SHA-256 picks the bank, the next eight (N) make the branch and the account."""
        paid = await pay(client, headers, key=EVP, key_type="RANDOM", name="Maria Souza")
        await drain(rt)
        assert len(GUIDE_BANKS) == 4
        digest = hashlib.sha256(EVP.encode()).digest()
        n = int.from_bytes(digest[1:9], "big")
        assert (await statement_counterpart(client, headers, paid))["bank"] == {
            "bankISPB": GUIDE_BANKS[digest[0] % 4][0],
            "bankName": GUIDE_BANKS[digest[0] % 4][1],
            "bankCode": GUIDE_BANKS[digest[0] % 4][2],
            "accountBranch": f"{n % 10000:04d}",
            "accountNumber": f"{n % 10**8:08d}-{n % 10}",
        }

    async def test_the_same_key_in_another_spelling_reaches_the_same_account(
        self, rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        hyphens = await pay(client, headers, key=EVP, key_type="RANDOM", name="Maria Souza")
        bare = await pay(
            client, headers, key=EVP.replace("-", "").upper(), key_type="RANDOM", name="Maria"
        )
        await drain(rt)
        assert (await statement_counterpart(client, headers, hyphens))["bank"] == (
            await statement_counterpart(client, headers, bare)
        )["bank"]


class TestRegisteredKey:
    async def test_the_statement_shows_the_registered_holder(
        self, rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        await register_key(client, headers, "carla@example.com")
        paid = await pay(
            client, headers, key="carla@example.com", key_type="EMAIL", name="Joana Prado"
        )
        await drain(rt)
        counterpart = await statement_counterpart(client, headers, paid)
        assert counterpart["name"] == "Maria Silva"
        assert counterpart["bank"]["accountNumber"] == "123456-7"
