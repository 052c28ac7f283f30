"""POST /api/pix/cash-out and its settlement, on real PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import httpx
import pytest

from pixgate.accounts.service import accounts
from pixgate.core.pix.keys import KEY_FORMS
from pixgate.payouts.queries import payments
from pixgate.payouts.service import settlement as payouts
from pixgate.runtime import Runtime
from tests.helpers import balance, bearer, make_account, statements_waiting
from tests.support import FixedClock, drain

PATH = "/api/pix/cash-out"
CPF = "52998224725"
EVP = "123e4567-e12b-42d3-a456-426614174000"


def order(value: object = 10, external_id: str | None = None, **details: Any) -> dict[str, Any]:
    return {
        "value": value,
        "externalId": external_id or f"ext-{uuid.uuid4()}",
        "description": "pagamento",
        "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF, **details},
    }


async def count_transactions(rt: Runtime, account_id: int) -> int:
    async with rt.db.connection() as conn:
        return int(
            await conn.fetchval(
                "SELECT count(*) FROM transactions WHERE account_id = $1", account_id
            )
        )


async def stored(rt: Runtime, transaction_id: str) -> Any:
    async with rt.db.connection() as conn:
        return await conn.fetchrow(
            "SELECT * FROM transactions WHERE transaction_id = $1::uuid", transaction_id
        )


async def sent_together(
    rt: Runtime, client: httpx.AsyncClient, account: Any, bodies: list[dict[str, Any]]
) -> list[httpx.Response]:
    """The answers to cash-outs sent while the account's lane is busy: all in one statement."""
    return await sent_in_one_lane(rt, client, [(account, body) for body in bodies])


async def sent_in_one_lane(
    rt: Runtime, client: httpx.AsyncClient, orders: list[tuple[Any, dict[str, Any]]]
) -> list[httpx.Response]:
    """The answers to cash-outs of accounts of one lane (`Database.lane`), each (account,
    body), sent while the lane is busy: all in one statement."""
    accounts = {a.account_id: a for a, _ in orders}
    headers = {pk: await bearer(client, a) for pk, a in accounts.items()}
    (key,) = {rt.db.lane(a.account_id) for a, _ in orders}
    async with rt.db.queued(key):
        calls = [
            asyncio.create_task(client.post(PATH, json=body, headers=headers[a.account_id]))
            for a, body in orders
        ]
        await statements_waiting(rt.db.batcher(payments.CREATE_PAYOUTS), key, len(orders))
    return list(await asyncio.gather(*calls))


async def accounts_of_one_lane(rt: Runtime, count: int, balance: str) -> list[Any]:
    """`count` new accounts whose rows share a lane (`Database.lane`)."""
    by_lane: dict[object, list[Any]] = {}
    while True:
        account = await make_account(rt, balance=balance)
        lane = by_lane.setdefault(rt.db.lane(account.account_id), [])
        lane.append(account)
        if len(lane) == count:
            return lane


class TestCreateAndSettle:
    async def test_pending_then_confirmed_with_hold_posted(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        headers = await bearer(client, account)
        response = await client.post(PATH, json=order("10.50", "pedido-1"), headers=headers)
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["status"] == "PENDING"
        assert body["externalId"] == "pedido-1"
        assert uuid.UUID(body["transactionId"])
        assert body["generateTime"].endswith("Z")
        assert await balance(rt, account.account_id) == (8950, 1050)

        assert await drain(rt) >= 1
        assert await balance(rt, account.account_id) == (8950, 0)
        row = await stored(rt, body["transactionId"])
        assert row["status"] == "CONFIRMED"
        assert row["end_to_end_id"].startswith("E" + rt.settings.ispb)
        assert len(row["end_to_end_id"]) == 32
        assert row["counterpart"]["name"]
        assert row["counterpart"]["bank"]["bankISPB"]
        async with rt.db.connection() as conn:
            events = await conn.fetch(
                "SELECT type FROM events WHERE transaction_id = $1", row["id"]
            )
        assert [e["type"] for e in events] == ["cash_out"]

    async def test_fee_is_held_and_debited(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt, balance="100.00")
        await accounts.update(
            rt, account.account_id, {"fees": {"cash_out": {"fixed": "0.50", "percent": "1"}}}
        )
        headers = await bearer(client, account)
        response = await client.post(PATH, json=order(20), headers=headers)
        assert response.status_code == 201
        assert await balance(rt, account.account_id) == (10000 - 2070, 2070)
        await drain(rt)
        assert await balance(rt, account.account_id) == (10000 - 2070, 0)
        assert (await stored(rt, response.json()["transactionId"]))["fee"] == 70

    async def test_counterpart_comes_from_the_dict(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        headers = await bearer(client, account)
        registered = await client.post(
            "/sandbox/dict/keys",
            headers=headers,
            json={
                "key": "maria@example.com",
                "keyType": "EMAIL",
                "name": "Maria Silva",
                "document": CPF,
                "ispb": "60701190",
                "bankName": "Banco Teste",
                "bankCode": "341",
                "branch": "0001",
                "accountNumber": "12345-6",
            },
        )
        assert registered.status_code == 201, registered.text
        response = await client.post(
            PATH, json=order(5, key="maria@example.com", keyType="EMAIL"), headers=headers
        )
        await drain(rt)
        row = await stored(rt, response.json()["transactionId"])
        assert row["status"] == "CONFIRMED"
        assert row["counterpart"] == {
            "name": "Maria Silva",
            "document": CPF,
            "bank": {
                "bankISPB": "60701190",
                "bankName": "Banco Teste",
                "bankCode": "341",
                "accountBranch": "0001",
                "accountNumber": "12345-6",
            },
        }

    async def test_settling_twice_has_no_second_effect(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        headers = await bearer(client, account)
        response = await client.post(PATH, json=order(10), headers=headers)
        row = await stored(rt, response.json()["transactionId"])
        await asyncio.gather(payouts.settle(rt, row["id"]), payouts.settle(rt, row["id"]))
        await payouts.settle(rt, row["id"])
        assert await balance(rt, account.account_id) == (9000, 0)
        async with rt.db.connection() as conn:
            assert (
                await conn.fetchval(
                    "SELECT count(*) FROM events WHERE transaction_id = $1", row["id"]
                )
                == 1
            )
            assert (
                await conn.fetchval(
                    "SELECT count(*) FROM ledger_postings "
                    "WHERE transaction_id = $1 AND memo = 'post'",
                    row["id"],
                )
                == 3
            )


class TestTermsChangedMeanwhile:
    """The API prices a cash-out from its copy of the account's fees and limits; a change made
    since (by another process, here straight through the service) must apply at once."""

    async def test_a_new_fee_applies_to_the_next_cash_out(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        headers = await bearer(client, account)
        first = await client.post(PATH, json=order(10), headers=headers)
        await accounts.update(rt, account.account_id, {"fees": {"cash_out": {"fixed": "0.25"}}})
        second = await client.post(PATH, json=order(10), headers=headers)
        assert (await stored(rt, first.json()["transactionId"]))["fee"] == 0
        assert (await stored(rt, second.json()["transactionId"]))["fee"] == 25
        assert await balance(rt, account.account_id) == (10000 - 2025, 2025)
        await drain(rt)

    async def test_terms_that_keep_changing_answer_503_try_again_and_write_nothing(
        self, rt: Runtime, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An operator changes the fee every time this process has just read it: after its
        attempts the cash-out answers a retryable 503, not a 500, and nothing is written."""
        account = await make_account(rt, balance="100.00")
        headers = await bearer(client, account)
        read = rt.account_terms.get
        fees = iter(range(1, 100))

        async def read_then_changed(db: Any, account_id: int) -> Any:
            row = await read(db, account_id)
            fee = {"cash_out": {"fixed": f"0.{next(fees):02d}"}}
            await accounts.update(rt, account_id, {"fees": fee})
            return row

        monkeypatch.setattr(rt.account_terms, "get", read_then_changed)
        response = await client.post(PATH, json=order(10), headers=headers)
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "1"
        assert response.json()["code"] == "TRY_AGAIN"
        assert await count_transactions(rt, account.account_id) == 0
        assert await balance(rt, account.account_id) == (10000, 0)

    async def test_raised_and_lowered_limits_apply_at_once(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        await accounts.update(rt, account.account_id, {"transaction_limit": 1000})
        headers = await bearer(client, account)
        refused = await client.post(PATH, json=order(20), headers=headers)
        assert refused.json()["code"] == "PIX_TRANSACTION_LIMIT_EXCEEDED"
        await accounts.update(rt, account.account_id, {"transaction_limit": 5000})
        assert (await client.post(PATH, json=order(20), headers=headers)).status_code == 201
        await accounts.update(rt, account.account_id, {"daily_limit": 3000})
        lowered = await client.post(PATH, json=order(20), headers=headers)
        assert lowered.json()["code"] == "PIX_DAILY_LIMIT_EXCEEDED"
        assert await balance(rt, account.account_id) == (10000 - 2000, 2000)
        assert await count_transactions(rt, account.account_id) == 1
        await drain(rt)


class TestConcurrency:
    async def test_fifty_concurrent_against_a_balance_for_twenty(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="200.00")
        headers = await bearer(client, account)
        responses = await asyncio.gather(
            *(client.post(PATH, json=order(10), headers=headers) for _ in range(50))
        )
        statuses = sorted(r.status_code for r in responses)
        assert statuses.count(201) == 20
        assert statuses.count(400) == 30
        assert {r.json()["code"] for r in responses if r.status_code == 400} == {
            "PIX_INSUFFICIENT_BALANCE"
        }
        assert await balance(rt, account.account_id) == (0, 20000)
        await drain(rt)
        assert await balance(rt, account.account_id) == (0, 0)
        assert await count_transactions(rt, account.account_id) == 20

    async def test_concurrent_duplicate_external_id_creates_one(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        headers = await bearer(client, account)
        responses = await asyncio.gather(
            *(client.post(PATH, json=order(1, "same-id"), headers=headers) for _ in range(10))
        )
        created = [r for r in responses if r.status_code == 201]
        duplicates = [r.json() for r in responses if r.status_code == 400]
        assert len(created) == 1
        assert len(duplicates) == 9
        for body in duplicates:
            assert body["code"] == body["errorCode"] == "PIX_DUPLICATE_EXTERNAL_ID"
            assert body["details"] == {
                "externalId": "same-id",
                "existingTransactionId": created[0].json()["transactionId"],
            }
        assert await count_transactions(rt, account.account_id) == 1
        assert await balance(rt, account.account_id) == (9900, 100)


class TestBatchedPerLane:
    """Cash-outs (and settlements) of the accounts of one lane that wait for it go in one
    statement (`core.db.batches`), each account's together; each is still answered as if it
    had gone alone."""

    async def test_waiting_cash_outs_are_held_refused_and_deduplicated_one_by_one(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """Whatever order the requests reach the batch in: the 41.00 never fits the balance,
        and whichever "twice" comes second finds the first's row."""
        account = await make_account(rt, balance="40.00")
        bodies = [
            order(10),
            order(10, "twice"),
            order(10, "twice"),
            order(10),
            order(41),
            order(10),
        ]
        responses = await sent_together(rt, client, account, bodies)
        assert sorted(r.status_code for r in responses) == [201, 201, 201, 201, 400, 400]
        assert sorted(r.json()["code"] for r in responses if r.status_code == 400) == [
            "PIX_DUPLICATE_EXTERNAL_ID",
            "PIX_INSUFFICIENT_BALANCE",
        ]
        assert await balance(rt, account.account_id) == (0, 4000)
        assert await count_transactions(rt, account.account_id) == 4
        await drain(rt)
        assert await balance(rt, account.account_id) == (0, 0)

    async def test_waiting_cash_outs_all_accepted_are_held_in_one_step(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="40.00")
        responses = await sent_together(rt, client, account, [order(10) for _ in range(4)])
        assert [r.status_code for r in responses] == [201] * 4
        assert await balance(rt, account.account_id) == (0, 4000)
        async with rt.db.connection() as conn:
            written = await conn.fetchrow(
                "SELECT count(*) AS payouts, count(DISTINCT xmin::text) AS steps"
                " FROM transactions WHERE account_id = $1",
                account.account_id,
            )
            jobs = await conn.fetchval(
                "SELECT count(*) FROM jobs WHERE args ->> 'transaction_id' IN"
                " (SELECT id::text FROM transactions WHERE account_id = $1)",
                account.account_id,
            )
        # one subtransaction for the four, where one at a time writes each in its own
        assert (written["payouts"], written["steps"], jobs) == (4, 1, 4)
        await drain(rt)
        assert await balance(rt, account.account_id) == (0, 0)

    async def test_waiting_settlements_each_settle_once(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="30.00")
        headers = await bearer(client, account)
        created = [await client.post(PATH, json=order(10), headers=headers) for _ in range(3)]
        ids = [(await stored(rt, r.json()["transactionId"]))["id"] for r in created]
        key = rt.db.lane(account.account_id)
        async with rt.db.queued(key):
            # the same payout twice in one statement: the second finds it settled
            calls = [asyncio.create_task(payouts.settle(rt, i)) for i in [*ids, ids[0]]]
            await statements_waiting(rt.db.batcher(payments.SETTLE_PAYOUTS), key, len(ids) + 1)
        await asyncio.gather(*calls)
        assert await balance(rt, account.account_id) == (0, 0)
        async with rt.db.connection() as conn:
            assert (
                await conn.fetchval(
                    "SELECT count(*) FROM transactions WHERE id = ANY($1) AND status = 'CONFIRMED'",
                    ids,
                )
                == 3
            )
            assert (
                await conn.fetchval(
                    "SELECT count(*) FROM events WHERE transaction_id = ANY($1)", ids
                )
                == 3
            )

    async def test_cash_outs_of_several_accounts_go_in_one_statement_each_answered_its_own(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """The statement takes the accounts in ascending order, and each request still gets
        its own answer: its own payout's, or, for one of `b`'s three, short of balance, the
        refusal."""
        a, b = await accounts_of_one_lane(rt, 2, balance="20.00")
        orders = [(b, order(10)), (a, order(10)), (b, order(10)), (b, order(10)), (a, order(10))]
        responses = await sent_in_one_lane(rt, client, orders)
        refused = []
        for (account, body), response in zip(orders, responses, strict=True):
            if response.status_code == 400:
                refused.append((account, response.json()["code"]))
                continue
            assert response.status_code == 201, response.text
            row = await stored(rt, response.json()["transactionId"])
            assert (row["account_id"], row["external_id"]) == (
                account.account_id,
                body["externalId"],
            )
        assert refused == [(b, "PIX_INSUFFICIENT_BALANCE")]
        assert await balance(rt, a.account_id) == (0, 2000)
        assert await balance(rt, b.account_id) == (0, 2000)
        async with rt.db.connection() as conn:
            # now() is the statement's transaction's start: one value, one statement
            started = await conn.fetchval(
                "SELECT count(DISTINCT created_at) FROM jobs WHERE args ->> 'transaction_id' IN"
                " (SELECT id::text FROM transactions WHERE account_id = ANY($1))",
                [a.account_id, b.account_id],
            )
        assert started == 1
        await drain(rt)
        assert await balance(rt, a.account_id) == (0, 0)
        assert await balance(rt, b.account_id) == (0, 0)

    async def test_settlements_of_several_accounts_go_in_one_statement(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        a, b = await accounts_of_one_lane(rt, 2, balance="20.00")
        ids = []
        for account in (b, a, b):
            headers = await bearer(client, account)
            created = await client.post(PATH, json=order(5), headers=headers)
            ids.append((await stored(rt, created.json()["transactionId"]))["id"])
        key = rt.db.lane(a.account_id)
        async with rt.db.queued(key):
            calls = [asyncio.create_task(payouts.settle(rt, i)) for i in ids]
            await statements_waiting(rt.db.batcher(payments.SETTLE_PAYOUTS), key, len(ids))
        await asyncio.gather(*calls)
        assert await balance(rt, a.account_id) == (1500, 0)
        assert await balance(rt, b.account_id) == (1000, 0)
        async with rt.db.connection() as conn:
            events = await conn.fetchrow(
                "SELECT count(*) AS events, count(DISTINCT created_at) AS statements"
                " FROM events WHERE transaction_id = ANY($1)",
                ids,
            )
        assert (events["events"], events["statements"]) == (3, 1)

    async def test_the_statement_refuses_accounts_out_of_order(self, rt: Runtime) -> None:
        """Ascending account order is what keeps two such statements from deadlocking."""
        a, b = sorted([(await make_account(rt)).account_id for _ in range(2)])
        async with rt.db.connection() as conn:
            with pytest.raises(asyncpg.RaiseError, match="not sorted by account"):
                await conn.fetch(
                    "SELECT * FROM payouts_create($1, $2, $3, $4, $5, $6, $7, $8,"
                    " $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
                    [b, a],
                    *([None, None] for _ in range(13)),
                    [[1, 1, 1], [1, 1, 1]],
                    *([None, None] for _ in range(6)),
                )


class TestSettlementErrors:
    @pytest.mark.parametrize(
        "code",
        [
            "TAX_ID_MISMATCH",
            "INVALID_TAX_ID",
            "BLOCKED_ACCOUNT",
            "ACCOUNT_CLOSED",
            "ORDER_REJECTED",
            "PAYMENT_EXPIRED",
            "SETTLEMENT_TIMEOUT",
        ],
    )
    async def test_each_error_code_by_scenario_debits_nothing(
        self, rt: Runtime, client: httpx.AsyncClient, code: str
    ) -> None:
        account = await make_account(rt, balance="50.00")
        headers = {**await bearer(client, account), "X-Sandbox-Scenario": code.lower()}
        response = await client.post(PATH, json=order(10), headers=headers)
        assert response.status_code == 201
        assert response.json()["status"] == "PENDING"
        assert await balance(rt, account.account_id) == (4000, 1000)
        await drain(rt)
        row = await stored(rt, response.json()["transactionId"])
        assert row["status"] == "ERROR"
        assert row["error_code"] == code
        assert row["error_message"]
        assert await balance(rt, account.account_id) == (5000, 0)

    async def _registered_key(
        self, client: httpx.AsyncClient, headers: dict[str, str], status: str = "ACTIVE"
    ) -> None:
        response = await client.post(
            "/sandbox/dict/keys",
            headers=headers,
            json={
                "key": "11987654321",
                "keyType": "PHONE",
                "name": "Dono",
                "document": CPF,
                "ispb": "00360305",
                "bankName": "Caixa",
                "bankCode": "104",
                "branch": "1",
                "accountNumber": "9",
                "status": status,
            },
        )
        assert response.status_code == 201, response.text

    async def test_document_differs_from_holder_with_check(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50.00")
        headers = await bearer(client, account)
        await self._registered_key(client, headers)
        other_cpf = "11144477735"
        response = await client.post(
            PATH,
            headers=headers,
            json=order(
                10,
                key="11987654321",
                keyType="PHONE",
                document=other_cpf,
                checkPixKeyWithDocument=True,
            ),
        )
        await drain(rt)
        row = await stored(rt, response.json()["transactionId"])
        assert (row["status"], row["error_code"]) == ("ERROR", "TAX_ID_MISMATCH")
        assert await balance(rt, account.account_id) == (5000, 0)

    async def test_document_differs_from_holder_without_check(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50.00")
        headers = await bearer(client, account)
        await self._registered_key(client, headers)
        response = await client.post(
            PATH,
            headers=headers,
            json=order(10, key="11987654321", keyType="PHONE", document="11144477735"),
        )
        await drain(rt)
        assert (await stored(rt, response.json()["transactionId"]))["error_code"] == (
            "TAX_ID_MISMATCH"
        )

    async def test_matching_document_with_check_confirms(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50.00")
        headers = await bearer(client, account)
        await self._registered_key(client, headers)
        response = await client.post(
            PATH,
            headers=headers,
            json=order(10, key="11987654321", keyType="PHONE", checkPixKeyWithDocument=True),
        )
        await drain(rt)
        assert (await stored(rt, response.json()["transactionId"]))["status"] == "CONFIRMED"
        assert await balance(rt, account.account_id) == (4000, 0)

    async def test_document_with_bad_check_digits_is_accepted_then_invalid_tax_id(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50.00")
        headers = await bearer(client, account)
        response = await client.post(PATH, headers=headers, json=order(10, document="12345678900"))
        assert response.status_code == 201
        await drain(rt)
        assert (await stored(rt, response.json()["transactionId"]))["error_code"] == (
            "INVALID_TAX_ID"
        )
        assert await balance(rt, account.account_id) == (5000, 0)

    @pytest.mark.parametrize(
        ("status", "code"), [("BLOCKED", "BLOCKED_ACCOUNT"), ("CLOSED", "ACCOUNT_CLOSED")]
    )
    async def test_destination_status_from_the_dict(
        self, rt: Runtime, client: httpx.AsyncClient, status: str, code: str
    ) -> None:
        account = await make_account(rt, balance="50.00")
        headers = await bearer(client, account)
        await self._registered_key(client, headers, status)
        response = await client.post(
            PATH, headers=headers, json=order(10, key="11987654321", keyType="PHONE")
        )
        await drain(rt)
        assert (await stored(rt, response.json()["transactionId"]))["error_code"] == code


class TestRefusals:
    """Every refusal answers the general error envelope and changes nothing."""

    async def _refused(
        self,
        rt: Runtime,
        client: httpx.AsyncClient,
        body: dict[str, Any],
        code: str,
        *,
        headers: dict[str, str] | None = None,
        status: int = 400,
        balance_brl: str = "100.00",
    ) -> dict[str, Any]:
        account = await make_account(rt, balance=balance_brl)
        auth = {**await bearer(client, account), **(headers or {})}
        response = await client.post(PATH, json=body, headers=auth)
        assert response.status_code == status, response.text
        envelope = response.json()
        assert envelope["code"] == code
        assert envelope["path"] == PATH and envelope["method"] == "POST"
        assert envelope["errorId"] and envelope["userMessage"]
        assert await count_transactions(rt, account.account_id) == 0
        assert await balance(rt, account.account_id) == (int(balance_brl.replace(".", "")), 0)
        return dict(envelope)

    async def test_field_validation_is_a_message_array(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        body = order()
        del body["details"]["name"]
        body["description"] = "x" * 141
        envelope = await self._refused(rt, client, body, "HTTP_ERROR")
        assert isinstance(envelope["message"], list) and len(envelope["message"]) == 2
        assert "errorCode" not in envelope

    @pytest.mark.parametrize("value", [0, "0.00", 0.001, "10.005", -5])
    async def test_invalid_amount(
        self, rt: Runtime, client: httpx.AsyncClient, value: object
    ) -> None:
        envelope = await self._refused(rt, client, order(value), "PIX_INVALID_AMOUNT")
        assert envelope["errorCode"] == "PIX_INVALID_AMOUNT"

    @pytest.mark.parametrize(
        ("key", "key_type"),
        [
            ("1234567890", "DOCUMENT"),
            ("not-an-email", "EMAIL"),
            ("+55119876543", "PHONE"),
            ("119876543", "PHONE"),
            ("123", "RANDOM"),
            (CPF, "EMAIL"),
        ],
    )
    async def test_invalid_pix_key(
        self, rt: Runtime, client: httpx.AsyncClient, key: str, key_type: str
    ) -> None:
        envelope = await self._refused(
            rt, client, order(key=key, keyType=key_type), "PIX_INVALID_PIX_KEY"
        )
        assert envelope["message"] == (
            f"details.key is not a valid {key_type} key: expected {KEY_FORMS[key_type]}"
        )

    @pytest.mark.parametrize("spelling", ["11987654321", "+5511987654321"])
    async def test_phone_key_in_either_spelling_reaches_the_same_key(
        self, rt: Runtime, client: httpx.AsyncClient, spelling: str
    ) -> None:
        """The spec's bare digits and the DICT's `+55` form are one key: the cash-out is
        taken, stored under the key's one spelling, and found by the key lookup."""
        account = await make_account(rt, balance="10.00")
        headers = await bearer(client, account)
        response = await client.post(
            PATH, headers=headers, json=order(1, key=spelling, keyType="PHONE")
        )
        assert response.status_code == 201, response.text
        await drain(rt)
        row = await stored(rt, response.json()["transactionId"])
        assert row["pix_key"] == "+5511987654321"
        for lookup in ("11987654321", "+5511987654321"):
            listed = await client.get(f"/api/pix/transactions/pix-key/{lookup}", headers=headers)
            assert listed.status_code == 200, listed.text
            ids = [item["transactionId"] for item in listed.json()["data"]]
            assert ids == [response.json()["transactionId"]], lookup

    @pytest.mark.parametrize("key", [CPF, "12ABC34501DE35", "11222333000181"])
    async def test_document_keys_cpf_and_cnpj_numeric_or_alphanumeric(
        self, rt: Runtime, client: httpx.AsyncClient, key: str
    ) -> None:
        account = await make_account(rt, balance="10.00")
        response = await client.post(
            PATH, json=order(1, key=key, keyType="DOCUMENT"), headers=await bearer(client, account)
        )
        assert response.status_code == 201, response.text
        await drain(rt)

    async def test_document_must_be_cpf_or_cnpj_by_form(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        await self._refused(rt, client, order(document="1234"), "HTTP_ERROR")

    async def test_check_without_document(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        body = order(checkPixKeyWithDocument=True)
        del body["details"]["document"]
        await self._refused(rt, client, body, "HTTP_ERROR")

    async def test_insufficient_balance_counts_the_fee(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="10.00")
        await accounts.update(rt, account.account_id, {"fees": {"cash_out": {"fixed": "0.01"}}})
        response = await client.post(PATH, json=order(10), headers=await bearer(client, account))
        assert response.json()["code"] == "PIX_INSUFFICIENT_BALANCE"
        assert await balance(rt, account.account_id) == (1000, 0)

    async def test_duplicate_external_id(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt, balance="10.00")
        headers = await bearer(client, account)
        first = await client.post(PATH, json=order(1, "dup"), headers=headers)
        second = await client.post(PATH, json=order(2, "dup"), headers=headers)
        assert second.status_code == 400
        assert second.json()["details"] == {
            "externalId": "dup",
            "existingTransactionId": first.json()["transactionId"],
        }
        assert await balance(rt, account.account_id) == (900, 100)

    @pytest.mark.parametrize(
        ("scenario", "code", "status"),
        [
            ("INSUFFICIENT_FUNDS", "PIX_INSUFFICIENT_BALANCE", 400),
            ("INVALID_PIX_KEY", "PIX_INVALID_PIX_KEY", 400),
            ("PROVIDER_UNAVAILABLE", "PROVIDER_UNAVAILABLE", 500),
            ("NOT_A_SCENARIO", "SANDBOX_SCENARIO_UNKNOWN", 400),
        ],
    )
    async def test_synchronous_scenarios(
        self, rt: Runtime, client: httpx.AsyncClient, scenario: str, code: str, status: int
    ) -> None:
        envelope = await self._refused(
            rt, client, order(), code, status=status, headers={"X-Sandbox-Scenario": scenario}
        )
        if scenario == "NOT_A_SCENARIO":
            assert "TAX_ID_MISMATCH" in envelope["message"]

    async def test_no_token(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        response = await client.post(PATH, json=order())
        assert response.status_code == 401
        body = response.json()
        assert body["code"] == "UNAUTHORIZED" and body["path"] == PATH
        assert {"timestamp", "method", "userMessage", "errorId", "error"} <= set(body)
        assert "errorCode" not in body, "a missing token is not a business error"


class TestLimits:
    async def _account(
        self, rt: Runtime, client: httpx.AsyncClient, **limits: int
    ) -> tuple[int, dict[str, str]]:
        account = await make_account(rt, balance="10000.00")
        await accounts.update(rt, account.account_id, limits)
        return account.account_id, await bearer(client, account)

    async def test_per_transaction(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        _, headers = await self._account(rt, client, transaction_limit=5000)
        assert (await client.post(PATH, json=order("50.00"), headers=headers)).status_code == 201
        refused = await client.post(PATH, json=order("50.01"), headers=headers)
        assert refused.json()["code"] == "PIX_TRANSACTION_LIMIT_EXCEEDED"

    async def test_daily_counts_pending_and_confirmed_not_error(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        _, headers = await self._account(rt, client, daily_limit=10000)
        rt.clock = FixedClock(datetime(2026, 11, 20, 12, 0, tzinfo=ZoneInfo("America/Sao_Paulo")))
        failed = await client.post(
            PATH, json=order(60), headers={**headers, "X-Sandbox-Scenario": "ORDER_REJECTED"}
        )
        assert failed.status_code == 201
        await drain(rt)
        assert (await client.post(PATH, json=order(60), headers=headers)).status_code == 201
        await drain(rt)
        assert (await client.post(PATH, json=order(40), headers=headers)).status_code == 201
        refused = await client.post(PATH, json=order("0.01"), headers=headers)
        assert refused.json()["code"] == "PIX_DAILY_LIMIT_EXCEEDED"
        rt.clock = FixedClock(datetime(2026, 11, 21, 0, 0, tzinfo=ZoneInfo("America/Sao_Paulo")))
        assert (await client.post(PATH, json=order(1), headers=headers)).status_code == 201
        await drain(rt)

    async def test_concurrent_payments_cannot_all_fit_under_the_daily_limit(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account_id, headers = await self._account(rt, client, daily_limit=5000)
        responses = await asyncio.gather(
            *(client.post(PATH, json=order(10), headers=headers) for _ in range(20))
        )
        statuses = [r.status_code for r in responses]
        assert statuses.count(201) == 5
        assert {r.json()["code"] for r in responses if r.status_code != 201} == {
            "PIX_DAILY_LIMIT_EXCEEDED"
        }
        assert await balance(rt, account_id) == (1_000_000 - 5000, 5000)
        assert await count_transactions(rt, account_id) == 5
        await drain(rt)

    async def test_a_limit_error_wins_over_insufficient_balance(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="10.00")
        await accounts.update(rt, account.account_id, {"daily_limit": 1000})
        headers = await bearer(client, account)
        refused = await client.post(PATH, json=order(20), headers=headers)
        assert refused.json()["code"] == "PIX_DAILY_LIMIT_EXCEEDED"
        assert await balance(rt, account.account_id) == (1000, 0)
        assert await count_transactions(rt, account.account_id) == 0

    @pytest.mark.parametrize(
        ("hour", "minute", "allowed"),
        [(19, 59, True), (20, 0, False), (5, 59, False), (6, 0, True)],
    )
    async def test_night_limit_in_brasilia_time(
        self, rt: Runtime, client: httpx.AsyncClient, hour: int, minute: int, allowed: bool
    ) -> None:
        _, headers = await self._account(rt, client, night_limit=10000)
        rt.clock = FixedClock(
            datetime(2026, 11, 20, hour, minute, tzinfo=ZoneInfo("America/Sao_Paulo"))
        )
        response = await client.post(PATH, json=order("100.01"), headers=headers)
        if allowed:
            assert response.status_code == 201, response.text
        else:
            assert response.json()["code"] == "PIX_NIGHT_LIMIT_EXCEEDED"
            assert (await client.post(PATH, json=order(100), headers=headers)).status_code == 201
        await drain(rt)
