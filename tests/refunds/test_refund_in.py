"""POST /api/pix/refund-in/{id} and its settlement, on real
PostgreSQL through HTTP."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import httpx

from pixgate.accounts.service import accounts
from pixgate.runtime import Runtime
from tests.helpers import assert_general_error, bearer, make_account
from tests.refunds.helpers import (
    account_with_pix,
    balance,
    count_rows,
    listed,
    paid_by_our_account,
    receive,
    refund_in,
    send,
    stored,
)
from tests.support import FixedClock, drain


class TestCreateAndSettle:
    async def test_pending_then_confirmed_posts_the_hold(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers, pix = await account_with_pix(rt, client, "100.00")
        response = await refund_in(
            client, headers, pix["transactionId"], "30.00", reason="Produto devolvido"
        )
        assert response.status_code == 201, response.text
        body = response.json()
        assert set(body) == {
            "transactionId",
            "externalId",
            "status",
            "refundValue",
            "providerTransactionId",
            "generateTime",
        }
        assert body["status"] == "PENDING" and body["refundValue"] == 30.0
        assert uuid.UUID(body["transactionId"]) and uuid.UUID(body["providerTransactionId"])
        assert body["externalId"].isalnum() and len(body["externalId"]) <= 35
        assert body["generateTime"].endswith("Z")
        assert await balance(rt, account_id) == (7000, 3000)

        await drain(rt)
        assert await balance(rt, account_id) == (7000, 0)
        row = await stored(rt, body["transactionId"])
        assert (row["status"], row["operation"], row["kind"], row["fee"]) == (
            "CONFIRMED",
            "REFUND_IN",
            "refund_in",
            0,
        )
        assert row["end_to_end_id"].startswith("D" + rt.settings.ispb)
        assert len(row["end_to_end_id"]) == 32
        assert row["description"] == "Produto devolvido"
        original = await stored(rt, pix["transactionId"])
        assert row["parent_id"] == original["id"]
        item = await listed(client, headers, body["transactionId"])
        assert (item["operationType"], item["movementType"], item["status"]) == (
            "Refund in",
            "DEBIT",
            "Confirmado",
        )
        assert (item["originalAmount"], item["feeAmount"], item["finalAmount"]) == (30, 0, 30)
        assert item["externalId"] == body["externalId"]
        assert item["counterpart"]["name"] == "Pagador Externo"
        async with rt.db.connection() as conn:
            types = await conn.fetch("SELECT type FROM events WHERE transaction_id = $1", row["id"])
        assert [t["type"] for t in types] == ["refund_in"]

    async def test_settlement_error_voids_the_hold_and_frees_the_amount(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers, pix = await account_with_pix(rt, client, "100.00")
        failed = await refund_in(
            client, headers, pix["transactionId"], "100.00", scenario="ORDER_REJECTED"
        )
        assert failed.status_code == 201, failed.text
        assert await balance(rt, account_id) == (0, 10000)
        await drain(rt)
        assert await balance(rt, account_id) == (10000, 0)
        row = await stored(rt, failed.json()["transactionId"])
        assert (row["status"], row["error_code"]) == ("ERROR", "ORDER_REJECTED")
        assert (await listed(client, headers, str(row["transaction_id"])))["status"] == "Error"
        # a refund that failed no longer counts: the whole amount can be refunded again
        again = await refund_in(client, headers, pix["transactionId"], "100.00")
        assert again.status_code == 201, again.text

    async def test_no_fee_and_not_counted_by_the_cash_out_limits(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        await accounts.update(
            rt,
            account.account_id,
            {
                "fees": {"cash_out": {"fixed": "1.00", "percent": "2"}},
                "transaction_limit": 500,
            },
        )
        headers = await bearer(client, account)
        pix = await receive(client, headers, "50.00")
        response = await refund_in(client, headers, pix["transactionId"], "50.00")
        assert response.status_code == 201, response.text
        assert await balance(rt, account.account_id) == (0, 5000)
        await drain(rt)
        assert await balance(rt, account.account_id) == (0, 0)
        assert await count_rows(rt, "limit_usage WHERE used <> 0") == 0


class TestRefundableBalance:
    async def test_partial_refunds_up_to_the_original_then_refused(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers, pix = await account_with_pix(rt, client, "100.00")
        assert (await refund_in(client, headers, pix["transactionId"], 60)).status_code == 201
        before = await count_rows(rt, "transactions")
        over = await refund_in(client, headers, pix["transactionId"], "40.01")
        body = assert_general_error(over, 400, "REFUND_AMOUNT_EXCEEDED")
        assert body["details"] == {"refundable": 40.0}
        assert await count_rows(rt, "transactions") == before
        assert await balance(rt, account_id) == (4000, 6000)
        assert (await refund_in(client, headers, pix["transactionId"], "40")).status_code == 201

    async def test_two_concurrent_refunds_over_the_original_exactly_one_passes(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="500.00")
        headers = await bearer(client, account)
        pix = await receive(client, headers, "100.00")
        responses = await asyncio.gather(
            refund_in(client, headers, pix["transactionId"], "60.00"),
            refund_in(client, headers, pix["transactionId"], "60.00"),
        )
        assert sorted(r.status_code for r in responses) == [201, 400], [r.text for r in responses]
        refused = next(r for r in responses if r.status_code == 400)
        assert_general_error(refused, 400, "REFUND_AMOUNT_EXCEEDED")
        assert await balance(rt, account.account_id) == (60000 - 6000, 6000)
        await drain(rt)
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 1


class TestWindow:
    async def test_day_89_accepted_day_90_refused(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        now = datetime.now(UTC).replace(microsecond=0)
        rt.clock = FixedClock(now)
        account = await make_account(rt)
        headers = await bearer(client, account)
        day_89 = await receive(client, headers, "10.00", paid_at=now - timedelta(days=89))
        day_90 = await receive(client, headers, "10.00", paid_at=now - timedelta(days=90))
        assert (await refund_in(client, headers, day_89["transactionId"], "10")).status_code == 201
        late = await refund_in(client, headers, day_90["transactionId"], "10")
        body = assert_general_error(late, 400, "REFUND_DEADLINE_EXCEEDED")
        assert body["details"]["lastDay"]
        assert await balance(rt, account.account_id) == (1000, 1000)

    async def test_the_window_is_a_setting(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        rt.settings = rt.settings.model_copy(update={"refund_window_days": 0})
        account = await make_account(rt)
        headers = await bearer(client, account)
        yesterday = datetime.now(UTC) - timedelta(days=1)
        pix = await receive(client, headers, "10.00", paid_at=yesterday)
        late = await refund_in(client, headers, pix["transactionId"], "10")
        assert_general_error(late, 400, "REFUND_DEADLINE_EXCEEDED")


class TestRefused:
    async def test_not_a_refundable_receipt_is_404(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        headers = await bearer(client, account)
        other = await make_account(rt, name="Outra Loja")
        other_headers = await bearer(client, other)
        theirs = await receive(client, other_headers, "10.00")
        sent = await send(rt, client, headers, "5.00")
        charge = await client.post(
            "/api/pix/cash-in",
            headers=headers,
            json={
                "transaction": {"value": 7, "description": "aberta", "externalId": "aberta-1"},
                "payer": {"fullName": "Fulano", "document": "52998224725"},
            },
        )
        assert charge.status_code == 201, charge.text
        before = await count_rows(rt, "transactions")
        for transaction_id in (
            str(uuid.uuid4()),
            theirs["transactionId"],
            sent["transactionId"],
            charge.json()["transactionId"],
        ):
            response = await refund_in(client, headers, transaction_id, "1.00")
            assert_general_error(response, 404, "NOT_FOUND")
        assert await count_rows(rt, "transactions") == before

    async def test_invalid_data_is_400(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        _, headers, pix = await account_with_pix(rt, client, "10.00")
        for value, extra in (
            (0, {}),
            ("0.001", {}),
            (-1, {}),
            ("abc", {}),
            (1, {"externalId": "com-hifen"}),
            (1, {"externalId": "x" * 36}),
            (1, {"reason": "r" * 141}),
        ):
            response = await refund_in(client, headers, pix["transactionId"], value, **extra)
            assert_general_error(response, 400, "HTTP_ERROR")
        assert_general_error(
            await client.post(
                "/api/pix/refund-in/not-a-uuid", json={"refundValue": 1}, headers=headers
            ),
            400,
        )
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 0

    async def test_reused_external_id_is_400(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        _, headers, pix = await account_with_pix(rt, client, "10.00")
        first = await refund_in(client, headers, pix["transactionId"], 1, externalId="dev1")
        assert first.status_code == 201 and first.json()["externalId"] == "dev1"
        again = await refund_in(client, headers, pix["transactionId"], 1, externalId="dev1")
        body = assert_general_error(again, 400, "PIX_DUPLICATE_EXTERNAL_ID")
        assert body["details"]["existingTransactionId"] == first.json()["transactionId"]

    async def test_short_balance_is_400_and_writes_nothing(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers, pix = await account_with_pix(rt, client, "10.00")
        await send(rt, client, headers, "8.00")
        response = await refund_in(client, headers, pix["transactionId"], "5.00")
        assert_general_error(response, 400, "PIX_INSUFFICIENT_BALANCE")
        assert await count_rows(rt, "transactions WHERE operation = 'REFUND_IN'") == 0
        assert await balance(rt, account_id) == (200, 0)


class TestPaidByOurAccount:
    async def test_returned_in_the_house_in_parts_never_more_than_the_pix(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """B received 40.00 from A (A paid B's charge with a QR cash-out): B's refunds debit
        B and credit A with a Refund out of its cash-out, at settlement, both at once."""
        pix = await paid_by_our_account(rt, client, "40.00")
        assert await balance(rt, pix.payer_id) == (6000, 0)
        first = await refund_in(client, pix.receiver_headers, pix.transaction_id, "15.00")
        assert first.status_code == 201, first.text
        assert first.json()["status"] == "PENDING"
        assert await balance(rt, pix.receiver_id) == (2500, 1500)
        await drain(rt)
        assert await balance(rt, pix.receiver_id) == (2500, 0)
        assert await balance(rt, pix.payer_id) == (7500, 0)
        refund = await listed(client, pix.receiver_headers, first.json()["transactionId"])
        assert (refund["operationType"], refund["movementType"], refund["status"]) == (
            "Refund in",
            "DEBIT",
            "Confirmado",
        )

        rest = await refund_in(client, pix.receiver_headers, pix.transaction_id, "25.00")
        assert rest.status_code == 201, rest.text
        over = await refund_in(client, pix.receiver_headers, pix.transaction_id, "0.01")
        assert assert_general_error(over, 400, "REFUND_AMOUNT_EXCEEDED")["details"] == {
            "refundable": 0.0
        }
        await drain(rt)
        assert await balance(rt, pix.receiver_id) == (0, 0)
        assert await balance(rt, pix.payer_id) == (10000, 0)

        response = await client.get(
            "/api/transactions", params={"size": 100}, headers=pix.payer_headers
        )
        assert response.status_code == 200, response.text
        credits = [i for i in response.json()["data"] if i["operationType"] == "Refund out"]
        assert sorted(i["finalAmount"] for i in credits) == [15.0, 25.0]
        assert {(i["movementType"], i["status"]) for i in credits} == {("CREDIT", "Confirmado")}
        sent = await stored(rt, pix.withdraw_id)
        refunds_in = {
            (await stored(rt, r.json()["transactionId"]))["end_to_end_id"] for r in (first, rest)
        }
        assert {i["endToEndId"] for i in credits} == refunds_in
        async with rt.db.connection() as conn:
            assert (
                await conn.fetchval(
                    "SELECT count(*) FROM transactions WHERE parent_id = $1", sent["id"]
                )
                == 2
            )
            events = await conn.fetch(
                "SELECT account_id, type FROM events WHERE type LIKE 'refund%'"
            )
            settlement = await conn.fetchval(
                "SELECT sum(amount) FROM ledger_postings WHERE book = 'settlement'"
            )
        assert sorted((e["account_id"], e["type"]) for e in events) == sorted(
            [(pix.receiver_id, "refund_in")] * 2 + [(pix.payer_id, "refund_out")] * 2
        )
        assert settlement == 0  # nothing left the house

    async def test_a_retried_request_credits_once(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        pix = await paid_by_our_account(rt, client, "40.00")
        first = await refund_in(
            client, pix.receiver_headers, pix.transaction_id, 10, externalId="d1"
        )
        assert first.status_code == 201, first.text
        again = await refund_in(
            client, pix.receiver_headers, pix.transaction_id, 10, externalId="d1"
        )
        assert_general_error(again, 400, "PIX_DUPLICATE_EXTERNAL_ID")
        await drain(rt)
        await drain(rt)
        assert await balance(rt, pix.receiver_id) == (3000, 0)
        assert await balance(rt, pix.payer_id) == (7000, 0)
