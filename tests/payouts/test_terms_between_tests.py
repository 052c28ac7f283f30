"""Each test starts without the previous test's account terms (the per-test reset).

Account ids restart at 1 in every test, and the runtime keeps a copy of each account's fees and
limits: the two tests below run in this order, the first leaving a priced account 1 behind
and the second pricing a different account 1. A copy carried over would be refused by the
payout's statement and priced again, so the second test counts the statements it runs.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from pixgate.accounts.service import accounts
from pixgate.payouts.queries import payments
from pixgate.runtime import Runtime
from tests.helpers import balance, bearer, make_account

PATH = "/api/pix/cash-out"


def order() -> dict[str, Any]:
    return {
        "value": 10,
        "externalId": f"ext-{uuid.uuid4()}",
        "description": "pagamento",
        "details": {
            "key": "123e4567-e12b-42d3-a456-426614174000",
            "keyType": "RANDOM",
            "name": "Fulano",
            "document": "52998224725",
        },
    }


class TestAccountOneTwice:
    async def test_account_one_with_a_fee(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt, balance="100.00")
        assert account.account_id == 1
        await accounts.update(rt, 1, {"fees": {"cash_out": {"fixed": "0.25"}}})
        response = await client.post(PATH, json=order(), headers=await bearer(client, account))
        assert response.status_code == 201, response.text
        assert await balance(rt, 1) == (10000 - 1025, 1025)

    async def test_account_one_without_a_fee_is_priced_at_once(
        self, rt: Runtime, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        statements: list[int] = []
        hold = payments.create_payout

        async def counted(db: Any, request: payments.Hold) -> Any:
            statements.append(request.fee)
            return await hold(db, request)

        monkeypatch.setattr(payments, "create_payout", counted)
        account = await make_account(rt, balance="100.00")
        assert account.account_id == 1
        response = await client.post(PATH, json=order(), headers=await bearer(client, account))
        assert response.status_code == 201, response.text
        assert statements == [0], "priced from the previous test's account 1 first"
        assert await balance(rt, 1) == (10000 - 1000, 1000)
