"""GET /api/transactions and GET /api/pix/transactions/pix-key/{pixKey}."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from pixgate.core.pix.keys import ANY_KEY_FORM
from pixgate.runtime import Runtime
from tests.builders import insert_transactions
from tests.helpers import assert_general_error, bearer, make_account
from tests.support import drain

LIST = "/api/transactions"


def by_key(key: str) -> str:
    return f"/api/pix/transactions/pix-key/{key}"


async def all_pages(
    client: httpx.AsyncClient, headers: dict[str, str], path: str, **params: Any
) -> list[str]:
    seen: list[str] = []
    page = 1
    while True:
        body = (await client.get(path, headers=headers, params={**params, "page": page})).json()
        seen += [item["transactionId"] for item in body["data"]]
        if not body["metadata"]["hasNext"]:
            return seen
        page += 1


class TestStatement:
    async def test_item_shape_labels_and_masking(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        headers = await bearer(client, account)
        created = await client.post(
            "/api/pix/cash-out",
            headers=headers,
            json={
                "value": 12.5,
                "externalId": "pedido-9",
                "details": {
                    "key": "52998224725",
                    "keyType": "DOCUMENT",
                    "name": "Fulano",
                    "document": "52998224725",
                },
            },
        )
        assert created.status_code == 201
        await drain(rt)
        body = (await client.get(LIST, headers=headers)).json()
        assert body["metadata"] == {
            "page": 1,
            "size": 20,
            "total": 1,
            "totalPages": 1,
            "hasNext": False,
            "hasPrevious": False,
        }
        item = body["data"][0]
        assert item["transactionId"] == created.json()["transactionId"]
        assert item["externalId"] == "pedido-9"
        assert (item["status"], item["operationType"], item["movementType"]) == (
            "Confirmado",
            "Pix out",
            "DEBIT",
        )
        assert (item["originalAmount"], item["feeAmount"], item["finalAmount"]) == (12.5, 0.0, 12.5)
        assert len(item["endToEndId"]) == 32
        assert item["createdAt"].endswith("Z") and item["processedAt"].endswith("Z")
        assert item["counterpart"]["document"] == "***.982.247-**"
        assert set(item["counterpart"]["bank"]) == {
            "bankISPB",
            "bankName",
            "bankCode",
            "accountBranch",
            "accountNumber",
        }

    @pytest.mark.parametrize(
        ("operation", "status", "label", "op_label", "movement"),
        [
            ("PAYMENT", "PENDING", "Pendente", "Pix in", "CREDIT"),
            ("WITHDRAW", "ERROR", "Error", "Pix out", "DEBIT"),
            ("REFUND_IN", "CONFIRMED", "Confirmado", "Refund in", "DEBIT"),
            ("REFUND_OUT", "CONFIRMED", "Confirmado", "Refund out", "CREDIT"),
        ],
    )
    async def test_labels_and_final_amount_by_movement(
        self,
        rt: Runtime,
        client: httpx.AsyncClient,
        operation: str,
        status: str,
        label: str,
        op_label: str,
        movement: str,
    ) -> None:
        account = await make_account(rt)
        await insert_transactions(
            rt,
            account.account_id,
            1,
            newest=datetime.now(UTC),
            operation=operation,
            status=status,
            amount=1000,
            fee=25,
        )
        item = (await client.get(LIST, headers=await bearer(client, account))).json()["data"][0]
        assert (item["status"], item["operationType"], item["movementType"]) == (
            label,
            op_label,
            movement,
        )
        assert item["finalAmount"] == (9.75 if movement == "CREDIT" else 10.25)

    async def test_paging_a_few_hundred_without_gaps_or_repeats(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        now = datetime.now(UTC)
        # Pairs share a timestamp: the id tie-break must still order them.
        ids = await insert_transactions(
            rt, account.account_id, 150, newest=now, step=timedelta(minutes=2)
        )
        ids += await insert_transactions(
            rt, account.account_id, 150, newest=now, step=timedelta(minutes=2), prefix="twin"
        )
        headers = await bearer(client, account)
        seen = await all_pages(client, headers, LIST, size=17)
        assert len(seen) == 300
        assert len(set(seen)) == 300

    async def test_paging_stays_exact_while_new_transactions_arrive(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        yesterday = datetime.now(UTC) - timedelta(days=1, hours=1)
        await insert_transactions(rt, account.account_id, 250, newest=yesterday)
        headers = await bearer(client, account)
        end_date = (yesterday - timedelta(hours=3)).date().isoformat()
        expected = (
            await client.get(LIST, headers=headers, params={"endDate": end_date, "size": 100})
        ).json()["metadata"]["total"]
        seen: list[str] = []
        page = 1
        while True:
            await insert_transactions(
                rt, account.account_id, 5, newest=datetime.now(UTC), prefix=f"new{page}"
            )
            body = (
                await client.get(
                    LIST, headers=headers, params={"endDate": end_date, "size": 30, "page": page}
                )
            ).json()
            seen += [i["transactionId"] for i in body["data"]]
            if not body["metadata"]["hasNext"]:
                break
            page += 1
        assert len(seen) == len(set(seen)) == expected > 0

    async def test_filters(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        now = datetime.now(UTC)
        await insert_transactions(
            rt, account.account_id, 3, newest=now, status="ERROR", prefix="err"
        )
        await insert_transactions(
            rt, account.account_id, 4, newest=now, operation="PAYMENT", prefix="in"
        )
        await insert_transactions(
            rt, account.account_id, 2, newest=now - timedelta(days=10), prefix="old"
        )
        headers = await bearer(client, account)

        async def total(**params: str) -> int:
            response = await client.get(LIST, headers=headers, params=params)
            assert response.status_code == 200, response.text
            return int(response.json()["metadata"]["total"])

        assert await total() == 9
        assert await total(status="ERROR") == 3
        assert await total(type="PAYMENT") == 4
        assert await total(type="WITHDRAW", status="CONFIRMED") == 2
        assert await total(externalId=f"in-{account.account_id}-2") == 1
        item = (await client.get(LIST, headers=headers, params={"status": "ERROR"})).json()
        e2e = item["data"][0]["endToEndId"]
        assert await total(endToEndId=e2e) == 1
        recent = (now - timedelta(days=2)).date().isoformat()
        assert await total(startDate=recent) == 7
        assert await total(endDate=(now - timedelta(days=9)).date().isoformat()) == 2

    @pytest.mark.parametrize(
        "params",
        [
            {"size": 0},
            {"size": 101},
            {"page": 0},
            {"status": "DONE"},
            {"type": "PIX"},
            {"startDate": "2026-13-01"},
            {"endDate": "yesterday"},
            {"startDate": "2026-11-10", "endDate": "2026-11-01"},
            {"startDate": "2026-09-01", "endDate": "2026-10-15"},
        ],
    )
    async def test_bad_parameters_are_400(
        self, rt: Runtime, client: httpx.AsyncClient, params: dict[str, Any]
    ) -> None:
        account = await make_account(rt)
        response = await client.get(LIST, headers=await bearer(client, account), params=params)
        assert_general_error(response, 400, "HTTP_ERROR")

    async def test_never_another_accounts_rows(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        mine, theirs = await make_account(rt), await make_account(rt, name="Outra")
        now = datetime.now(UTC)
        await insert_transactions(rt, theirs.account_id, 5, newest=now, pix_key="+5511987654321")
        await insert_transactions(rt, mine.account_id, 2, newest=now, prefix="mine")
        headers = await bearer(client, mine)
        body = (await client.get(LIST, headers=headers)).json()
        assert body["metadata"]["total"] == 2
        assert all(i["externalId"].startswith("mine") for i in body["data"])
        other = await client.get(
            LIST, headers=headers, params={"externalId": f"ext-{theirs.account_id}-0"}
        )
        assert other.json()["metadata"]["total"] == 0
        keyed = await client.get(by_key("11987654321"), headers=headers)
        assert keyed.json()["metadata"]["total"] == 0

    async def test_requires_a_token(self, client: httpx.AsyncClient) -> None:
        assert (await client.get(LIST)).status_code == 401


class TestByPixKey:
    @pytest.mark.parametrize(
        ("stored", "asked"),
        [
            ("+5511987654321", "11987654321"),
            ("+5511987654321", "+5511987654321"),
            ("123e4567-e89b-42d3-a456-426614174000", "123E4567E89B42D3A456426614174000"),
            ("maria@example.com", "Maria@Example.com"),
            ("52998224725", "52998224725"),
            ("12ABC34501DE35", "12ABC34501DE35"),
        ],
    )
    async def test_matches_every_spelling_of_a_key(
        self, rt: Runtime, client: httpx.AsyncClient, stored: str, asked: str
    ) -> None:
        account = await make_account(rt)
        await insert_transactions(
            rt, account.account_id, 3, newest=datetime.now(UTC), pix_key=stored
        )
        await insert_transactions(
            rt,
            account.account_id,
            2,
            newest=datetime.now(UTC),
            pix_key="other@example.com",
            prefix="other",
        )
        response = await client.get(by_key(asked), headers=await bearer(client, account))
        assert response.status_code == 200, response.text
        assert response.json()["metadata"]["total"] == 3

    async def test_cash_out_keys_are_found_by_key(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="10.00")
        headers = await bearer(client, account)
        await client.post(
            "/api/pix/cash-out",
            headers=headers,
            json={
                "value": 1,
                "externalId": "x",
                "details": {
                    "key": "11987654321",
                    "keyType": "PHONE",
                    "name": "F",
                    "document": "52998224725",
                },
            },
        )
        await drain(rt)
        body = (await client.get(by_key("11987654321"), headers=headers)).json()
        assert body["metadata"]["total"] == 1

    async def test_at_most_1000_results(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        await insert_transactions(
            rt,
            account.account_id,
            1100,
            newest=datetime.now(UTC),
            step=timedelta(seconds=30),
            pix_key="maria@example.com",
        )
        headers = await bearer(client, account)
        first = (
            await client.get(by_key("maria@example.com"), headers=headers, params={"size": 1000})
        ).json()
        assert len(first["data"]) == 1000
        assert first["metadata"]["total"] == 1000
        assert first["metadata"]["hasNext"] is False
        beyond = (
            await client.get(
                by_key("maria@example.com"), headers=headers, params={"size": 300, "page": 4}
            )
        ).json()
        assert len(beyond["data"]) == 100
        assert beyond["metadata"]["hasNext"] is False

    async def test_default_range_is_30_days(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        now = datetime.now(UTC)
        await insert_transactions(
            rt, account.account_id, 1, newest=now - timedelta(days=29), pix_key="maria@example.com"
        )
        await insert_transactions(
            rt,
            account.account_id,
            1,
            newest=now - timedelta(days=32),
            pix_key="maria@example.com",
            prefix="old",
        )
        body = (
            await client.get(by_key("maria@example.com"), headers=await bearer(client, account))
        ).json()
        assert body["metadata"]["total"] == 1

    @pytest.mark.parametrize(
        ("key", "params"),
        [
            ("not-a-key", {}),
            ("123", {}),
            ("maria@example.com", {"size": 1001}),
            ("maria@example.com", {"startDate": "2026-01-01", "endDate": "2026-03-01"}),
        ],
    )
    async def test_bad_key_or_parameters_are_400(
        self, rt: Runtime, client: httpx.AsyncClient, key: str, params: dict[str, Any]
    ) -> None:
        account = await make_account(rt)
        response = await client.get(
            by_key(key), headers=await bearer(client, account), params=params
        )
        assert response.status_code == 400, response.text

    async def test_a_bad_key_is_told_the_forms_a_key_takes(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await client.get(by_key("123"), headers=await bearer(client, account))
        assert response.status_code == 400, response.text
        assert response.json()["message"] == f"pixKey must be {ANY_KEY_FORM}"


async def test_lists_answer_while_payments_run(rt: Runtime, client: httpx.AsyncClient) -> None:
    """Reads and writes of one account interleave without errors or torn pages."""
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)

    async def pay(i: int) -> int:
        response = await client.post(
            "/api/pix/cash-out",
            headers=headers,
            json={
                "value": 1,
                "externalId": f"c{i}",
                "details": {
                    "key": "maria@example.com",
                    "keyType": "EMAIL",
                    "name": "M",
                    "document": "52998224725",
                },
            },
        )
        return response.status_code

    results = await asyncio.gather(
        *(pay(i) for i in range(10)), *(client.get(LIST, headers=headers) for _ in range(10))
    )
    assert sorted(r for r in results if isinstance(r, int)) == [201] * 10
    await drain(rt)
    assert (await client.get(LIST, headers=headers)).json()["metadata"]["total"] == 10
