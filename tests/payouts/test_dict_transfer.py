"""POST /dict/pix: DICT transfers, idempotency, the NORM queue, balances."""

from __future__ import annotations

import asyncio
import uuid
from http import HTTPStatus
from typing import Any

import httpx
import pytest

from pixgate.runtime import Runtime
from tests.helpers import bearer, footprint, make_account
from tests.support import FixedClock, drain

HOLDER_CPF = "52998224725"
OTHER_CPF = "11144477735"
HOLDER_ISPB = "60701190"
EMAIL_KEY = "maria.silva@example.com"


async def register_key(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    key: str = EMAIL_KEY,
    key_type: str = "EMAIL",
    *,
    document: str = HOLDER_CPF,
    ispb: str = HOLDER_ISPB,
) -> None:
    response = await client.post(
        "/sandbox/dict/keys",
        json={
            "key": key,
            "keyType": key_type,
            "name": "Maria Silva",
            "document": document,
            "ispb": ispb,
            "bankName": "Banco Destino",
            "branch": "0001",
            "accountNumber": "123456-7",
            "status": "ACTIVE",
        },
        headers=headers,
    )
    assert response.status_code in (200, 201), response.text


def transfer_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"pixKey": EMAIL_KEY, "payment": {"currency": "BRL", "amount": 100}}
    body.update(overrides)
    return body


async def post_transfer(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    body: dict[str, Any],
    key: str | None = None,
    **extra_headers: str,
) -> httpx.Response:
    all_headers = {**headers, "x-idempotency-key": key or str(uuid.uuid4()), **extra_headers}
    return await client.post("/dict/pix", json=body, headers=all_headers)


async def balances(client: httpx.AsyncClient, headers: dict[str, str]) -> tuple[float, float]:
    response = await client.get("/accounts/balances", headers=headers)
    assert response.status_code == 200
    amount = response.json()["data"][0]["balanceAmount"]
    return amount["available"], amount["blocked"]


async def transaction(rt: Runtime, transaction_id: int) -> Any:
    async with rt.db.connection() as conn:
        return await conn.fetchrow("SELECT * FROM transactions WHERE id = $1", transaction_id)


async def count(rt: Runtime, sql: str, *args: Any) -> int:
    async with rt.db.connection() as conn:
        value: int = await conn.fetchval(sql, *args)
    return value


@pytest.fixture
async def payer(rt: Runtime, client: httpx.AsyncClient) -> dict[str, str]:
    """Headers of an account holding 1000.00, with EMAIL_KEY registered in the DICT."""
    account = await make_account(rt, name="Pagadora", balance="1000.00")
    headers = await bearer(client, account)
    await register_key(client, headers)
    return headers


async def test_transfer_holds_then_settles_with_section_3_balances(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    assert await balances(client, payer) == (1000.0, 0.0)

    response = await post_transfer(
        client, payer, transfer_body(description="aluguel", paymentFlow="rent")
    )

    assert response.status_code == 201, response.text
    body = response.json()
    assert body["type"] == "PENDING"
    assert body["payment"] == {"amount": 100.0}
    assert isinstance(body["id"], int)
    assert len(body["endToEndId"]) == 32 and body["endToEndId"].startswith("E")
    assert body["eventDate"].endswith("Z")
    assert await balances(client, payer) == (900.0, 100.0)

    await drain(rt)

    assert await balances(client, payer) == (900.0, 0.0)
    row = await transaction(rt, body["id"])
    assert row["status"] == "CONFIRMED"
    assert (row["operation"], row["kind"]) == ("WITHDRAW", "dict_transfer")
    assert row["pix_key"] == EMAIL_KEY
    assert row["counterpart"]["document"] == HOLDER_CPF
    assert row["counterpart"]["bank"]["bankISPB"] == HOLDER_ISPB
    assert row["details"]["priority"] == "NORM"
    assert row["details"]["expiration"] == 600
    assert row["details"]["paymentFlow"] == "rent"
    assert row["description"] == "aluguel"
    events = await count(
        rt,
        "SELECT count(*) FROM events WHERE transaction_id = $1 AND type = 'cash_out'",
        body["id"],
    )
    assert events == 1


async def test_high_priority_with_matching_document_completes(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    response = await post_transfer(
        client, payer, transfer_body(priority="HIGH", creditorDocument="529.982.247-25")
    )
    assert response.status_code == 201, response.text

    await drain(rt)

    row = await transaction(rt, response.json()["id"])
    assert row["status"] == "CONFIRMED"
    assert row["details"]["creditorDocument"] == HOLDER_CPF
    assert await balances(client, payer) == (900.0, 0.0)


async def test_creditor_document_of_someone_else_ends_in_error_without_debit(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    response = await post_transfer(
        client, payer, transfer_body(priority="HIGH", creditorDocument=OTHER_CPF)
    )

    assert response.status_code == 201, response.text
    assert response.json()["type"] == "ERROR"
    row = await transaction(rt, response.json()["id"])
    assert (row["status"], row["error_code"]) == ("ERROR", "TAX_ID_MISMATCH")
    assert await balances(client, payer) == (1000.0, 0.0)
    events = await count(rt, "SELECT count(*) FROM events WHERE transaction_id = $1", row["id"])
    assert events == 1


@pytest.mark.parametrize(
    "key",
    [
        None,
        "not-a-uuid",
        "c232ab00-9414-11ec-b3c8-9f6bdeced846",
        "9f2d6c1e0b7a4e3f8d5c2b1a0f9e8d7c",
    ],
    ids=["missing", "not-a-uuid", "uuid1", "uuid4-hex"],
)
async def test_idempotency_key_missing_or_not_uuid_v4_is_400(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str], key: str | None
) -> None:
    headers = dict(payer) if key is None else {**payer, "x-idempotency-key": key}

    response = await client.post("/dict/pix", json=transfer_body(), headers=headers)

    assert response.status_code == 400
    assert set(response.json()) == {"statusCode", "message", "error"}
    assert "x-idempotency-key" in response.json()["message"][0]
    assert await count(rt, "SELECT count(*) FROM transactions") == 0


async def test_same_key_twice_answers_the_same_transfer_and_creates_one(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    key = str(uuid.uuid4())

    first = await post_transfer(client, payer, transfer_body(), key)
    again = await post_transfer(client, payer, transfer_body(), key)

    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert await count(rt, "SELECT count(*) FROM transactions") == 1
    assert await balances(client, payer) == (900.0, 100.0)


async def test_same_key_with_another_body_is_422_and_changes_nothing(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    key = str(uuid.uuid4())
    await post_transfer(client, payer, transfer_body(), key)

    response = await post_transfer(
        client, payer, transfer_body(payment={"currency": "BRL", "amount": 5}), key
    )

    assert response.status_code == 422
    assert await count(rt, "SELECT count(*) FROM transactions") == 1
    assert await balances(client, payer) == (900.0, 100.0)


async def test_twenty_concurrent_repeats_make_one_transfer_and_one_hold(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    key = str(uuid.uuid4())

    responses = await asyncio.gather(
        *(post_transfer(client, payer, transfer_body(), key) for _ in range(20))
    )

    assert {r.status_code for r in responses} == {201}
    assert len({r.json()["id"] for r in responses}) == 1
    assert await count(rt, "SELECT count(*) FROM transactions") == 1
    holds = await count(
        rt, "SELECT count(DISTINCT entry_id) FROM ledger_postings WHERE memo = 'hold'"
    )
    assert holds == 1
    assert await balances(client, payer) == (900.0, 100.0)


async def test_high_priority_without_creditor_document_is_400(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    response = await post_transfer(client, payer, transfer_body(priority="HIGH"))

    assert response.status_code == 400
    assert "creditorDocument" in " ".join(response.json()["message"])
    assert await count(rt, "SELECT count(*) FROM transactions") == 0


@pytest.mark.parametrize(
    "pix_key",
    [
        "",
        "not a key",
        "1234567890",  # 10 digits: neither CPF nor CNPJ
        "123456789012",  # 12 digits
        "123456789012345",  # 15 digits
        "11999998888@",
        "maria@",
        "5511999998888",  # phone without +
        "+1 5551234567",
        "+5511",
        "123e4567-e89b-12d3-a456",  # truncated EVP
    ],
)
async def test_invalid_pix_key_is_400(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str], pix_key: str
) -> None:
    response = await post_transfer(client, payer, transfer_body(pixKey=pix_key))

    assert response.status_code == 400, pix_key
    assert await count(rt, "SELECT count(*) FROM transactions") == 0


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"payment": {"currency": "USD", "amount": 100}}, "currency"),
        ({"payment": {"currency": "BRL", "amount": 0}}, "amount"),
        ({"payment": {"currency": "BRL", "amount": -1}}, "amount"),
        ({"payment": {"currency": "BRL", "amount": 1.001}}, "amount"),
        ({"payment": {"currency": "BRL"}}, "amount"),
        ({"expiration": 0}, "expiration"),
        ({"expiration": 10801}, "expiration"),
        ({"description": "x" * 141}, "description"),
        ({"ispbDeny": ["1234567"]}, "ispbDeny"),
        ({"creditorDocument": "52998224724"}, "creditorDocument"),
        ({"priority": "LOW"}, "priority"),
    ],
)
async def test_invalid_fields_are_400(
    rt: Runtime,
    client: httpx.AsyncClient,
    payer: dict[str, str],
    override: dict[str, Any],
    field: str,
) -> None:
    response = await post_transfer(client, payer, transfer_body(**override))

    assert response.status_code == 400
    assert field in " ".join(response.json()["message"])
    assert await count(rt, "SELECT count(*) FROM transactions") == 0


async def test_valid_key_formats_reach_the_dict(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    """Each DICT key type is accepted; unregistered ones answer 422, not 400."""
    for pix_key in (
        HOLDER_CPF,
        "11222333000181",
        "12ABC34501DE35",
        "+5511999998888",
        str(uuid.uuid4()),
    ):
        response = await post_transfer(client, payer, transfer_body(pixKey=pix_key))
        assert response.status_code == 422, (pix_key, response.text)


async def test_destination_ispb_in_ispb_deny_is_422(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    response = await post_transfer(client, payer, transfer_body(ispbDeny=["00000001", HOLDER_ISPB]))

    assert response.status_code == 422
    assert set(response.json()) == {"statusCode", "message", "error"}
    assert await count(rt, "SELECT count(*) FROM transactions") == 0
    assert await balances(client, payer) == (1000.0, 0.0)


async def test_key_unknown_to_the_dict_is_422(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    response = await post_transfer(client, payer, transfer_body(pixKey="ninguem@example.com"))

    assert response.status_code == 422
    assert await count(rt, "SELECT count(*) FROM transactions") == 0


async def test_insufficient_balance_is_422_and_creates_nothing(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    response = await post_transfer(
        client, payer, transfer_body(payment={"currency": "BRL", "amount": 1000.01})
    )

    assert response.status_code == 422
    assert await count(rt, "SELECT count(*) FROM transactions") == 0
    assert await balances(client, payer) == (1000.0, 0.0)


@pytest.mark.parametrize(
    ("scenario", "status", "message", "real"),
    [
        (
            "INSUFFICIENT_FUNDS",
            422,
            "available balance is less than amount + fee (sandbox)",
            transfer_body(payment={"currency": "BRL", "amount": 1000.01}),
        ),
        (
            "invalid_pix_key",
            400,
            ["pixKey: the PIX key was refused by the settling bank (sandbox)"],
            transfer_body(pixKey="maria"),
        ),
        ("PROVIDER_UNAVAILABLE", 500, "the settling bank could not be reached (sandbox)", None),
    ],
)
async def test_a_scenario_the_bank_refuses_at_once_answers_as_the_real_refusal(
    rt: Runtime,
    client: httpx.AsyncClient,
    payer: dict[str, str],
    scenario: str,
    status: int,
    message: str | list[str],
    real: dict[str, Any] | None,
) -> None:
    """Refused before the DICT is asked, in the family's body and the status the real
    refusal has; nothing is written or held, so the same key then makes the transfer."""
    before = await footprint(rt)
    key = str(uuid.uuid4())
    headers = {"X-Sandbox-Scenario": scenario}

    response = await post_transfer(client, payer, transfer_body(), key, **headers)

    phrase = HTTPStatus(status).phrase
    assert response.json() == {"statusCode": status, "message": message, "error": phrase}
    assert response.status_code == status
    if real is not None:
        refused = (await post_transfer(client, payer, real)).json()
        assert (refused["statusCode"], refused["error"]) == (status, phrase)
        assert type(refused["message"]) is type(message)
    assert await footprint(rt) == before
    assert await balances(client, payer) == (1000.0, 0.0)
    again = await post_transfer(client, payer, transfer_body(), key)
    assert again.status_code == 201 and "Idempotent-Replayed" not in again.headers


async def test_a_repeat_answers_the_first_transfer_whatever_its_scenario(
    client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    key = str(uuid.uuid4())
    first = await post_transfer(client, payer, transfer_body(), key)

    again = await post_transfer(
        client, payer, transfer_body(), key, **{"X-Sandbox-Scenario": "INSUFFICIENT_FUNDS"}
    )

    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]


async def test_norm_transfer_expiring_in_the_queue_ends_in_error_and_releases_funds(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    clock = FixedClock(rt.clock.now())
    rt.clock = clock
    key = str(uuid.uuid4())
    response = await post_transfer(client, payer, transfer_body(expiration=60), key)
    assert response.status_code == 201
    assert await balances(client, payer) == (900.0, 100.0)

    clock.advance(seconds=61)
    await drain(rt)

    row = await transaction(rt, response.json()["id"])
    assert (row["status"], row["error_code"]) == ("ERROR", "PAYMENT_EXPIRED")
    assert await balances(client, payer) == (1000.0, 0.0)
    events = await count(rt, "SELECT count(*) FROM events WHERE transaction_id = $1", row["id"])
    assert events == 1
    replay = await post_transfer(client, payer, transfer_body(expiration=60), key)
    assert (replay.status_code, replay.json()["type"]) == (201, "ERROR")


async def test_high_transfer_does_not_expire_in_the_queue(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    clock = FixedClock(rt.clock.now())
    rt.clock = clock
    response = await post_transfer(
        client, payer, transfer_body(priority="HIGH", creditorDocument=HOLDER_CPF, expiration=1)
    )
    assert response.status_code == 201

    clock.advance(seconds=5)
    await drain(rt)

    assert (await transaction(rt, response.json()["id"]))["status"] == "CONFIRMED"


async def test_replay_after_settlement_reports_completed(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    key = str(uuid.uuid4())
    first = await post_transfer(client, payer, transfer_body(), key)
    await drain(rt)

    again = await post_transfer(client, payer, transfer_body(), key)

    assert again.status_code == 201
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["endToEndId"] == first.json()["endToEndId"]
    assert again.json()["type"] == "COMPLETED"


async def test_another_account_cannot_replay_or_touch_the_transfer(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    key = str(uuid.uuid4())
    mine = await post_transfer(client, payer, transfer_body(), key)
    other = await bearer(client, await make_account(rt, name="Outra", balance="50.00"))

    theirs = await post_transfer(client, other, transfer_body(), key)

    assert theirs.status_code == 422  # their own (insufficient) attempt, not our transfer
    assert "id" not in theirs.json()
    assert await balances(client, payer) == (900.0, 100.0)
    assert await balances(client, other) == (50.0, 0.0)
    row = await transaction(rt, mine.json()["id"])
    assert row["status"] == "PENDING"


async def test_without_token_is_401(client: httpx.AsyncClient) -> None:
    response = await post_transfer(client, {}, transfer_body())

    assert response.status_code == 401
