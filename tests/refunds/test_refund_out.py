"""POST /sandbox/pix/{transactionId}/refund-out: the receiver of one of our cash-outs
returns money, a REFUND_OUT credited at once, never more in all than the cash-out."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import orjson

from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from tests.helpers import assert_general_error, bearer, make_account
from tests.refunds.helpers import (
    EVP,
    balance,
    count_rows,
    listed,
    paid_by_our_account,
    receive,
    send,
    stored,
)
from tests.support import drain
from tests.webhooks.receiver import Receiver


async def refund_out(
    client: httpx.AsyncClient, headers: dict[str, str], transaction_id: str, value: object
) -> httpx.Response:
    return await client.post(
        f"/sandbox/pix/{transaction_id}/refund-out", json={"value": value}, headers=headers
    )


async def test_credited_at_once_and_listed_as_refund_out(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    sent = await send(rt, client, headers, "40.00")
    assert await balance(rt, account.account_id) == (6000, 0)
    response = await refund_out(client, headers, sent["transactionId"], "15.00")
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["status"], body["value"]) == ("CONFIRMED", 15.0)
    assert body["endToEndId"].startswith("D") and len(body["endToEndId"]) == 32
    assert await balance(rt, account.account_id) == (7500, 0)
    row = await stored(rt, body["transactionId"])
    original = await stored(rt, sent["transactionId"])
    assert (row["operation"], row["status"], row["fee"], row["parent_id"]) == (
        "REFUND_OUT",
        "CONFIRMED",
        0,
        original["id"],
    )
    assert row["counterpart"] == original["counterpart"]
    item = await listed(client, headers, body["transactionId"])
    assert (item["operationType"], item["movementType"], item["status"]) == (
        "Refund out",
        "CREDIT",
        "Confirmado",
    )
    assert item["finalAmount"] == 15.0 and item["processedAt"]
    async with rt.db.connection() as conn:
        types = await conn.fetch("SELECT type FROM events WHERE transaction_id = $1", row["id"])
    assert [t["type"] for t in types] == ["refund_out"]


async def test_never_more_than_the_cash_out(rt: Runtime, client: httpx.AsyncClient) -> None:
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    sent = await send(rt, client, headers, "40.00")
    assert (await refund_out(client, headers, sent["transactionId"], 30)).status_code == 201
    over = await refund_out(client, headers, sent["transactionId"], "10.01")
    body = assert_general_error(over, 400, "REFUND_AMOUNT_EXCEEDED")
    assert body["details"] == {"refundable": 10.0}
    assert await balance(rt, account.account_id) == (9000, 0)
    assert (await refund_out(client, headers, sent["transactionId"], 10)).status_code == 201
    assert await balance(rt, account.account_id) == (10000, 0)


async def test_concurrent_returns_over_the_cash_out_exactly_one_passes(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    sent = await send(rt, client, headers, "40.00")
    responses = await asyncio.gather(
        refund_out(client, headers, sent["transactionId"], 30),
        refund_out(client, headers, sent["transactionId"], 30),
    )
    assert sorted(r.status_code for r in responses) == [201, 400], [r.text for r in responses]
    assert await balance(rt, account.account_id) == (9000, 0)


async def test_not_a_confirmed_cash_out_of_the_account_is_404(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    other = await make_account(rt, name="Outra Loja", balance="100.00")
    theirs = await send(rt, client, await bearer(client, other), "10.00")
    received = await receive(client, headers, "10.00")
    rt.settings = rt.settings.model_copy(update={"settlement_delay_ms": 600_000})
    pending = await client.post(
        "/api/pix/cash-out",
        json={
            "value": 1,
            "externalId": "pendente-1",
            "details": {"key": EVP, "keyType": "RANDOM", "name": "F", "document": "52998224725"},
        },
        headers=headers,
    )
    assert pending.status_code == 201, pending.text
    before = await balance(rt, account.account_id)
    for transaction_id in (
        str(uuid.uuid4()),
        theirs["transactionId"],
        received["transactionId"],
        pending.json()["transactionId"],
    ):
        assert_general_error(await refund_out(client, headers, transaction_id, 1), 404, "NOT_FOUND")
    assert await balance(rt, account.account_id) == before
    assert await count_rows(rt, "transactions WHERE operation = 'REFUND_OUT'") == 0


async def test_invalid_value_is_400(rt: Runtime, client: httpx.AsyncClient) -> None:
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    sent = await send(rt, client, headers, "40.00")
    for value in (0, "0.001", -5, "x"):
        assert_general_error(await refund_out(client, headers, sent["transactionId"], value), 400)
    assert await count_rows(rt, "transactions WHERE operation = 'REFUND_OUT'") == 0


async def test_refund_out_webhooks_v1_and_v2(
    rt: Runtime, client: httpx.AsyncClient, receiver: Receiver
) -> None:
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    for version in ("v1", "v2"):
        await webhooks.add(
            rt,
            account.account_id,
            event_type="refund_out",
            url=receiver.url(f"/{version}"),
            version=version,
        )
    sent = await send(rt, client, headers, "40.00")
    response = await refund_out(client, headers, sent["transactionId"], "12.50")
    assert response.status_code == 201, response.text
    await drain(rt)
    v1 = orjson.loads(receiver.at("/v1")[0].body)
    v2 = orjson.loads(receiver.at("/v2")[0].body)
    assert (v1["event"], v1["status"], v1["movementType"]) == ("RefundOut", "CONFIRMED", "CREDIT")
    assert (v1["transactionId"], v1["finalAmount"]) == (response.json()["transactionId"], 12.5)
    assert v1["endToEndId"] == response.json()["endToEndId"]
    assert v2["type"] == "REFUND"
    assert (v2["data"]["status"], v2["data"]["creditDebitType"]) == ("REFUNDED", "CREDIT")
    assert v2["data"]["payment"] == {"amount": "40.00", "currency": "BRL"}
    assert v2["data"]["refunds"][0]["endToEndId"] == response.json()["endToEndId"]


async def test_a_cash_out_paid_to_our_own_account_is_not_returned_from_outside(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    """Its receiver is an account of this gateway, which returns it with a refund of its own
    (refunds.md): no return of it can come from another bank."""
    pix = await paid_by_our_account(rt, client, "40.00")
    response = await refund_out(client, pix.payer_headers, pix.withdraw_id, "10.00")
    body = assert_general_error(response, 404, "NOT_FOUND")
    assert "refund" in body["message"]
    assert await balance(rt, pix.payer_id) == (6000, 0)
    assert await count_rows(rt, "transactions WHERE operation = 'REFUND_OUT'") == 0
