"""What a request tells the provider (`X-Sandbox-Scenario`) is the provider's: kept with a
payout it settles later where the provider owns it, never in the transaction's `details`,
and still what decides the settlement."""

from __future__ import annotations

from typing import Any

import httpx

from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account
from tests.payouts.test_cash_out import order, stored
from tests.payouts.test_dict_transfer import payer, post_transfer, transaction, transfer_body
from tests.refunds.helpers import account_with_pix, refund_in
from tests.support import drain

__all__ = ["payer"]  # the fixture, used by name below


async def kept(rt: Runtime) -> dict[int, str]:
    """Every payout's kept instructions, by its numeric id."""
    async with rt.db.connection() as conn:
        rows = await conn.fetch("SELECT transaction_id, value FROM provider_instructions")
    return {r["transaction_id"]: r["value"] for r in rows}


def outcome(row: Any) -> tuple[str, str | None]:
    return row["status"], row["error_code"]


async def test_a_cash_out_s_scenario_is_kept_for_the_provider_not_in_details(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    headers = await bearer(client, await make_account(rt, balance="100.00"))
    told = await client.post(
        "/api/pix/cash-out",
        json=order(),
        headers={**headers, "X-Sandbox-Scenario": "order_rejected"},
    )
    plain = await client.post("/api/pix/cash-out", json=order(), headers=headers)
    assert (told.status_code, plain.status_code) == (201, 201), (told.text, plain.text)
    told_row = await stored(rt, told.json()["transactionId"])
    plain_row = await stored(rt, plain.json()["transactionId"])
    assert "scenario" not in told_row["details"] and "scenario" not in plain_row["details"]
    assert await kept(rt) == {told_row["id"]: "ORDER_REJECTED"}

    await drain(rt)
    told_row = await stored(rt, told.json()["transactionId"])
    plain_row = await stored(rt, plain.json()["transactionId"])
    assert outcome(told_row) == ("ERROR", "ORDER_REJECTED")
    assert outcome(plain_row) == ("CONFIRMED", None)


async def test_a_refund_s_scenario_is_kept_for_the_provider_not_in_details(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    _, headers, pix = await account_with_pix(rt, client, "100.00")
    told = await refund_in(
        client, headers, pix["transactionId"], "10.00", scenario="SETTLEMENT_TIMEOUT"
    )
    assert told.status_code == 201, told.text
    row = await stored(rt, told.json()["transactionId"])
    assert "scenario" not in row["details"]
    assert await kept(rt) == {row["id"]: "SETTLEMENT_TIMEOUT"}

    await drain(rt)
    assert outcome(await stored(rt, told.json()["transactionId"])) == (
        "ERROR",
        "SETTLEMENT_TIMEOUT",
    )


async def test_a_dict_transfer_s_scenario_is_kept_for_the_provider_not_in_details(
    rt: Runtime, client: httpx.AsyncClient, payer: dict[str, str]
) -> None:
    told = await post_transfer(
        client, payer, transfer_body(), **{"X-Sandbox-Scenario": "ACCOUNT_CLOSED"}
    )
    assert told.status_code == 201, told.text
    row = await transaction(rt, told.json()["id"])
    assert "scenario" not in row["details"]
    assert await kept(rt) == {row["id"]: "ACCOUNT_CLOSED"}

    await drain(rt)
    assert outcome(await transaction(rt, told.json()["id"])) == ("ERROR", "ACCOUNT_CLOSED")
