"""MED cases: opened through the sandbox, their block, their analysis and
refund, their events, and GET /api/med with its filters, pages, refusals and rate limit."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from pixgate.core.ids import new_end_to_end_id
from pixgate.ledger.service import verify
from pixgate.runtime import Runtime
from tests.helpers import assert_general_error, balance, bearer, make_account
from tests.support import drain

MED = "/sandbox/med"
PAYER = {"name": "João Pagador", "document": "52998224725"}


async def receive(client: httpx.AsyncClient, headers: dict[str, str], value: float) -> str:
    """A PIX received by the caller's account; its end-to-end id."""
    response = await client.post(
        "/sandbox/pix/incoming", json={"value": value, "payer": PAYER}, headers=headers
    )
    assert response.status_code == 201, response.text
    end_to_end_id: str = response.json()["endToEndId"]
    return end_to_end_id


async def open_case(
    client: httpx.AsyncClient, headers: dict[str, str], end_to_end_id: str, **fields: Any
) -> dict[str, Any]:
    response = await client.post(MED, json={"endToEndId": end_to_end_id, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    case: dict[str, Any] = response.json()
    return case


async def analyse(
    client: httpx.AsyncClient, headers: dict[str, str], case_id: int, result: str
) -> httpx.Response:
    return await client.post(
        f"{MED}/{case_id}/analysis",
        json={"result": result, "details": f"analysed: {result}"},
        headers=headers,
    )


async def event_types(rt: Runtime, account_id: int) -> list[str]:
    async with rt.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT type FROM events WHERE account_id = $1 ORDER BY id", account_id
        )
    return [row["type"] for row in rows]


async def med_events(rt: Runtime, account_id: int) -> list[dict[str, Any]]:
    async with rt.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT data FROM events WHERE account_id = $1 AND type LIKE 'med_%' ORDER BY id",
            account_id,
        )
    return [row["data"]["extra"]["med"] for row in rows]


async def refunds_of(rt: Runtime, account_id: int) -> list[dict[str, Any]]:
    async with rt.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT * FROM transactions WHERE account_id = $1 AND operation = 'REFUND_IN'",
            account_id,
        )
    return [dict(row) for row in rows]


class TestTakeIn:
    async def test_a_case_on_a_received_pix_blocks_its_amount_and_is_reconciled(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="10")
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 100)

        case = await open_case(
            client, headers, end_to_end_id, cause="SOCIAL_ENGINEERING", description="golpe"
        )

        assert case["status"] == "RECEIVED"
        assert case["reason"] == "REFUND_REQUEST"
        assert (case["cause"], case["description"]) == ("SOCIAL_ENGINEERING", "golpe")
        assert case["analysisResult"] is None and case["analysisDetails"] is None
        assert case["endToEnd"] == end_to_end_id
        assert case["isReconciled"] is True
        async with rt.db.connection() as conn:
            original_id = await conn.fetchval(
                "SELECT id FROM transactions WHERE end_to_end_id = $1", end_to_end_id
            )
        assert case["originalTransactionId"] == original_id
        original = case["originalTransaction"]
        assert original["amount"] == 100.0
        assert (original["type"], original["transactionType"]) == ("PIX", "CASH_IN")
        assert original["name"] == PAYER["name"]
        assert original["document"] != PAYER["document"] and "*" in original["document"]
        assert original["dateTime"].endswith("Z")
        assert case["requestingBank"]["ispb"] == end_to_end_id[1:9]
        assert case["requestingBank"]["name"]
        assert case["contestedBank"] == {"ispb": rt.settings.ispb, "name": rt.settings.bank_name}
        assert case["blockedAmount"] == 100.0
        assert await balance(rt, account.account_id) == (1000, 10000)
        assert await event_types(rt, account.account_id) == ["cash_in", "med_created"]
        assert (await med_events(rt, account.account_id))[0] == case

    async def test_the_block_stops_at_the_available_balance(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 100)
        response = await client.post(
            "/api/pix/cash-out",
            json={
                "value": 70,
                "details": {
                    "key": "destino@example.com",
                    "keyType": "EMAIL",
                    "name": "Fulano",
                    "document": PAYER["document"],
                },
                "externalId": "spent-70",
            },
            headers=headers,
        )
        assert response.status_code == 201, response.text

        case = await open_case(client, headers, end_to_end_id)

        assert case["status"] == "RECEIVED" and case["blockedAmount"] == 30.0
        assert await balance(rt, account.account_id) == (0, 10000)

    async def test_a_case_on_an_unknown_pix_stays_open_unreconciled_and_blocks_nothing(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50")
        headers = await bearer(client, account)
        foreign = new_end_to_end_id("60701190", rt.clock.now())

        case = await open_case(client, headers, foreign)

        assert case["status"] == "OPEN"
        assert case["isReconciled"] is False
        assert case["originalTransaction"] is None and case["originalTransactionId"] is None
        assert case["requestingBank"] == {"ispb": "60701190", "name": None}
        assert case["blockedAmount"] == 0
        assert await balance(rt, account.account_id) == (5000, 0)

    async def test_another_accounts_pix_is_not_reconciled_nor_blocked(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        owner = await make_account(rt, name="Dona")
        owner_headers = await bearer(client, owner)
        end_to_end_id = await receive(client, owner_headers, 40)
        other = await make_account(rt, name="Outra")

        case = await open_case(client, await bearer(client, other), end_to_end_id)

        assert (case["status"], case["isReconciled"]) == ("OPEN", False)
        assert case["originalTransaction"] is None
        assert await balance(rt, owner.account_id) == (4000, 0)
        listed = await client.get("/api/med", headers=owner_headers)
        assert listed.json()["data"] == []

    async def test_one_case_at_a_time_per_pix(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 20)
        first = await open_case(client, headers, end_to_end_id)

        again = await client.post(MED, json={"endToEndId": end_to_end_id}, headers=headers)
        assert_general_error(again, 409)
        assert await balance(rt, account.account_id) == (0, 2000)

        assert (await analyse(client, headers, first["id"], "REJECTED")).status_code == 200
        second = await open_case(client, headers, end_to_end_id)
        assert second["id"] != first["id"] and second["status"] == "RECEIVED"

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"endToEndId": "E123"}, "endToEndId"),
            ({"endToEndId": "X" * 32}, "endToEndId"),
            ({"endToEndId": "E60701190202611221410Ab12345678c", "cause": "BAD"}, "cause"),
            ({"endToEndId": "E60701190202611221410Ab12345678c", "reason": "NOPE"}, "reason"),
        ],
    )
    async def test_bad_requests_are_refused_and_change_nothing(
        self, rt: Runtime, client: httpx.AsyncClient, body: dict[str, Any], field: str
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)

        response = await client.post(MED, json=body, headers=headers)

        error = assert_general_error(response, 400)
        assert field in str(error)
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM med_cases") == 0


class TestAnalysis:
    @pytest.mark.parametrize(
        ("cause", "nature"),
        [
            ("SOCIAL_ENGINEERING", "MED_FRAUDE"),
            (None, "MED_FRAUDE"),
            ("OPERATIONAL_FAILURE", "MED_OPERACIONAL"),
        ],
    )
    async def test_approval_returns_the_blocked_amount_to_the_payer(
        self, rt: Runtime, client: httpx.AsyncClient, cause: str | None, nature: str
    ) -> None:
        account = await make_account(rt, balance="5")
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 100)
        case = await open_case(client, headers, end_to_end_id, cause=cause)

        response = await analyse(client, headers, case["id"], "APPROVED")

        assert response.status_code == 200, response.text
        analysed = response.json()
        assert (analysed["status"], analysed["analysisResult"]) == ("ANALYZED", "APPROVED")
        assert analysed["analysisDetails"] == "analysed: APPROVED"
        [refund] = await refunds_of(rt, account.account_id)
        assert refund["amount"] == 10000 and refund["fee"] == 0
        assert refund["status"] == "PENDING"
        assert refund["end_to_end_id"].startswith("D") and len(refund["end_to_end_id"]) == 32
        assert refund["details"]["natureza"] == nature
        async with rt.db.connection() as conn:
            original_id = await conn.fetchval(
                "SELECT id FROM transactions WHERE end_to_end_id = $1", end_to_end_id
            )
        assert refund["parent_id"] == original_id
        # the block became the refund's hold: nothing went back to available meanwhile
        assert await balance(rt, account.account_id) == (500, 10000)

        await drain(rt)

        [settled] = await refunds_of(rt, account.account_id)
        assert settled["status"] == "CONFIRMED"
        assert await balance(rt, account.account_id) == (500, 0)
        assert await event_types(rt, account.account_id) == [
            "cash_in",
            "med_created",
            "med_accepted",
            "refund_in",
        ]
        async with rt.db.connection() as conn:
            assert await verify.problems(conn) == []
        devolucao = await client.get(
            f"/pix/{end_to_end_id}/devolucao/{settled['external_id']}", headers=headers
        )
        assert devolucao.status_code == 200, devolucao.text
        assert devolucao.json()["natureza"] == nature
        assert devolucao.json()["status"] == "DEVOLVIDO"

    async def test_approval_refunds_no_more_than_is_left_to_refund(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100")
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 100)
        case = await open_case(client, headers, end_to_end_id)
        assert case["blockedAmount"] == 100.0
        refund = await client.put(
            f"/pix/{end_to_end_id}/devolucao/antes1", json={"valor": "60.00"}, headers=headers
        )
        assert refund.status_code == 201, refund.text

        response = await analyse(client, headers, case["id"], "APPROVED")

        assert response.status_code == 200, response.text
        amounts = sorted(r["amount"] for r in await refunds_of(rt, account.account_id))
        assert amounts == [4000, 6000]
        assert await balance(rt, account.account_id) == (10000, 10000)

    async def test_rejection_releases_the_block(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 80)
        case = await open_case(client, headers, end_to_end_id)

        response = await analyse(client, headers, case["id"], "REJECTED")

        assert response.status_code == 200, response.text
        assert (response.json()["status"], response.json()["analysisResult"]) == (
            "ANALYZED",
            "REJECTED",
        )
        assert await balance(rt, account.account_id) == (8000, 0)
        assert await refunds_of(rt, account.account_id) == []
        assert await event_types(rt, account.account_id) == [
            "cash_in",
            "med_created",
            "med_rejected",
        ]
        [created, rejected] = await med_events(rt, account.account_id)
        assert created["status"] == "RECEIVED" and rejected == response.json()

    async def test_an_unreconciled_approval_refunds_nothing(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50")
        headers = await bearer(client, account)
        case = await open_case(client, headers, new_end_to_end_id("60701190", rt.clock.now()))

        response = await analyse(client, headers, case["id"], "APPROVED")

        assert response.status_code == 200, response.text
        assert response.json()["analysisResult"] == "APPROVED"
        assert await refunds_of(rt, account.account_id) == []
        assert await balance(rt, account.account_id) == (5000, 0)

    async def test_an_ended_case_cannot_be_analysed_again(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 30)
        case = await open_case(client, headers, end_to_end_id)
        assert (await analyse(client, headers, case["id"], "REJECTED")).status_code == 200

        again = await analyse(client, headers, case["id"], "APPROVED")

        assert_general_error(again, 409)
        assert await refunds_of(rt, account.account_id) == []
        assert await balance(rt, account.account_id) == (3000, 0)

    async def test_another_accounts_case_is_not_found(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        owner = await make_account(rt, name="Dona")
        owner_headers = await bearer(client, owner)
        case = await open_case(client, owner_headers, await receive(client, owner_headers, 30))
        other = await make_account(rt, name="Outra")

        response = await analyse(client, await bearer(client, other), case["id"], "APPROVED")

        assert_general_error(response, 404)
        assert await balance(rt, owner.account_id) == (0, 3000)

    async def test_unknown_result_is_refused(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        case = await open_case(client, headers, await receive(client, headers, 30))

        response = await analyse(client, headers, case["id"], "MAYBE")

        assert_general_error(response, 400)
        assert await balance(rt, account.account_id) == (0, 3000)


class TestCancellation:
    async def test_a_cancellation_ends_the_case_and_releases_the_block(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 25)
        case = await open_case(client, headers, end_to_end_id)

        cancelled = await open_case(client, headers, end_to_end_id, reason="REFUND_CANCELLATION")

        assert cancelled["id"] == case["id"]
        assert (cancelled["status"], cancelled["reason"]) == ("CANCELLED", "REFUND_CANCELLATION")
        assert cancelled["analysisResult"] is None
        assert await balance(rt, account.account_id) == (2500, 0)
        assert_general_error(await analyse(client, headers, case["id"], "APPROVED"), 409)

    async def test_cancelling_without_a_case_is_not_found(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        end_to_end_id = await receive(client, headers, 25)

        response = await client.post(
            MED,
            json={"endToEndId": end_to_end_id, "reason": "REFUND_CANCELLATION"},
            headers=headers,
        )

        assert_general_error(response, 404)
        assert await balance(rt, account.account_id) == (2500, 0)


class TestList:
    async def make_cases(self, rt: Runtime, client: httpx.AsyncClient) -> dict[str, Any]:
        account = await make_account(rt)
        headers = await bearer(client, account)
        received = await open_case(client, headers, await receive(client, headers, 10))
        analysed = await open_case(client, headers, await receive(client, headers, 20))
        response = await analyse(client, headers, analysed["id"], "REJECTED")
        analysed = response.json()
        unknown = await open_case(client, headers, new_end_to_end_id("60701190", rt.clock.now()))
        return {"headers": headers, "cases": [received, analysed, unknown]}

    async def test_lists_newest_first_with_metadata(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        made = await self.make_cases(rt, client)

        response = await client.get("/api/med", headers=made["headers"])

        assert response.status_code == 200, response.text
        body = response.json()
        assert body["data"] == list(reversed(made["cases"]))
        assert body["metadata"] == {"total": 3, "page": 1, "pageSize": 20, "totalPages": 1}

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ({"status": "RECEIVED"}, [0]),
            ({"status": "ANALYZED"}, [1]),
            ({"status": "OPEN"}, [2]),
            ({"status": "CANCELLED"}, []),
            ({"isReconciled": "true"}, [1, 0]),
            ({"isReconciled": "false"}, [2]),
        ],
    )
    async def test_filters(
        self,
        rt: Runtime,
        client: httpx.AsyncClient,
        query: dict[str, str],
        expected: list[int],
    ) -> None:
        made = await self.make_cases(rt, client)

        response = await client.get("/api/med", params=query, headers=made["headers"])

        assert response.status_code == 200, response.text
        assert [c["id"] for c in response.json()["data"]] == [
            made["cases"][i]["id"] for i in expected
        ]
        assert response.json()["metadata"]["total"] == len(expected)

    async def test_date_filters(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        made = await self.make_cases(rt, client)
        now = rt.clock.now()
        later = (now + timedelta(hours=1)).isoformat()
        earlier = (now - timedelta(hours=1)).isoformat()
        headers = made["headers"]

        ahead = await client.get("/api/med", params={"startDate": later}, headers=headers)
        behind = await client.get("/api/med", params={"endDate": earlier}, headers=headers)
        around = await client.get(
            "/api/med", params={"startDate": earlier, "endDate": later}, headers=headers
        )

        assert ahead.json()["data"] == [] and behind.json()["data"] == []
        assert around.json()["metadata"]["total"] == 3

    async def test_pages(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        made = await self.make_cases(rt, client)

        response = await client.get(
            "/api/med", params={"page": 2, "pageSize": 2}, headers=made["headers"]
        )

        assert response.status_code == 200, response.text
        assert [c["id"] for c in response.json()["data"]] == [made["cases"][0]["id"]]
        assert response.json()["metadata"] == {
            "total": 3,
            "page": 2,
            "pageSize": 2,
            "totalPages": 2,
        }

    @pytest.mark.parametrize(
        "query",
        [
            {"status": "DONE"},
            {"isReconciled": "perhaps"},
            {"startDate": "yesterday"},
            {"endDate": "2026-13-01T00:00:00Z"},
            {"page": "0"},
            {"pageSize": "0"},
            {"pageSize": "101"},
            {"startDate": "2026-11-02T00:00:00Z", "endDate": "2026-11-01T00:00:00Z"},
        ],
    )
    async def test_bad_queries_are_400(
        self, rt: Runtime, client: httpx.AsyncClient, query: dict[str, str]
    ) -> None:
        account = await make_account(rt)

        response = await client.get("/api/med", params=query, headers=await bearer(client, account))

        assert_general_error(response, 400)

    async def test_needs_a_token(self, client: httpx.AsyncClient) -> None:
        assert_general_error(await client.get("/api/med"), 401)

    async def test_rate_limited_with_retry_after(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        rt.settings = rt.settings.model_copy(update={"med_rate_limit": "2/minute"})
        account = await make_account(rt)
        headers = await bearer(client, account)

        answers = [await client.get("/api/med", headers=headers) for _ in range(3)]

        assert [a.status_code for a in answers[:2]] == [200, 200]
        assert_general_error(answers[2], 429)
        assert int(answers[2].headers["Retry-After"]) >= 1
