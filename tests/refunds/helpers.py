"""What the refund tests share: money received and sent through the API, balances, refunds."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx

from pixgate.runtime import Runtime
from tests.charges.test_cash_in import create_charge
from tests.helpers import balance, bearer, make_account
from tests.payouts.test_cash_out import stored
from tests.support import drain

CPF = "52998224725"
PAYER = {"name": "Pagador Externo", "document": CPF}
EVP = "123e4567-e12b-42d3-a456-426614174000"

__all__ = ["balance", "stored"]  # the cash-out tests' readers, shared


async def account_with_pix(
    rt: Runtime, client: httpx.AsyncClient, value: str = "100.00"
) -> tuple[int, dict[str, str], dict[str, Any]]:
    """A new account (no balance), its headers, and a PIX of `value` it received."""
    account = await make_account(rt)
    headers = await bearer(client, account)
    return account.account_id, headers, await receive(client, headers, value)


async def receive(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    value: str = "100.00",
    *,
    paid_at: datetime | None = None,
) -> dict[str, Any]:
    """A PIX received without a charge (sandbox): `{transactionId, endToEndId}`."""
    body: dict[str, Any] = {"value": value, "payer": PAYER}
    if paid_at is not None:
        body["paidAt"] = paid_at.isoformat()
    response = await client.post("/sandbox/pix/incoming", json=body, headers=headers)
    assert response.status_code == 201, response.text
    received: dict[str, Any] = response.json()
    return received


async def send(
    rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str], value: str = "40.00"
) -> dict[str, Any]:
    """A cash-out, settled (CONFIRMED): its 2.2 answer."""
    response = await client.post(
        "/api/pix/cash-out",
        json={
            "value": value,
            "externalId": f"out-{uuid.uuid4().hex[:12]}",
            "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
        },
        headers=headers,
    )
    assert response.status_code == 201, response.text
    await drain(rt)
    sent: dict[str, Any] = response.json()
    return sent


@dataclass(frozen=True, slots=True)
class InternalPix:
    """A PIX one of our accounts (the payer) paid to another (the receiver): the payer paid
    the receiver's charge with a QR cash-out, settled in the house."""

    payer_id: int
    payer_headers: dict[str, str]
    receiver_id: int
    receiver_headers: dict[str, str]
    transaction_id: str
    """The receiver's PAYMENT (what it refunds)."""
    end_to_end_id: str
    withdraw_id: str
    """The payer's WITHDRAW (`transactionId`)."""


async def paid_by_our_account(
    rt: Runtime,
    client: httpx.AsyncClient,
    value: str = "40.00",
    *,
    payer_balance: str = "100.00",
    receiver_balance: str = "0",
) -> InternalPix:
    """Two new accounts; the payer pays the receiver's charge of `value`."""
    payer = await make_account(rt, name="Cliente Pagador", balance=payer_balance)
    receiver = await make_account(rt, name="Loja Recebedora", balance=receiver_balance)
    payer_headers = await bearer(client, payer)
    receiver_headers = await bearer(client, receiver)
    charge = await create_charge(client, receiver_headers, value=value)
    paid = await client.post(
        "/api/pix/cash-out-qrcode",
        json={"qrCode": charge["pixCode"], "value": value, "externalId": uuid.uuid4().hex},
        headers=payer_headers,
    )
    assert paid.status_code == 201, paid.text
    assert paid.json()["status"] == "CONFIRMED"
    payment = await stored(rt, charge["transactionId"])
    return InternalPix(
        payer_id=payer.account_id,
        payer_headers=payer_headers,
        receiver_id=receiver.account_id,
        receiver_headers=receiver_headers,
        transaction_id=charge["transactionId"],
        end_to_end_id=payment["end_to_end_id"],
        withdraw_id=paid.json()["transactionId"],
    )


async def refund_in(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    transaction_id: str,
    value: object,
    **extra: Any,
) -> httpx.Response:
    scenario = extra.pop("scenario", None)
    return await client.post(
        f"/api/pix/refund-in/{transaction_id}",
        json={"refundValue": value, **extra},
        headers={**headers, **({"X-Sandbox-Scenario": scenario} if scenario else {})},
    )


async def devolucao(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    end_to_end_id: str,
    refund_id: str,
    valor: str,
    **extra: Any,
) -> httpx.Response:
    scenario = extra.pop("scenario", None)
    return await client.put(
        f"/pix/{end_to_end_id}/devolucao/{refund_id}",
        json={"valor": valor, **extra},
        headers={**headers, **({"X-Sandbox-Scenario": scenario} if scenario else {})},
    )


async def count_rows(rt: Runtime, table: str) -> int:
    async with rt.db.connection() as conn:
        return int(await conn.fetchval(f"SELECT count(*) FROM {table}"))


async def listed(
    client: httpx.AsyncClient, headers: dict[str, str], transaction_id: str
) -> dict[str, Any]:
    """The item of GET /api/transactions for this transactionId."""
    response = await client.get("/api/transactions", params={"size": 100}, headers=headers)
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["data"]
    return next(i for i in items if i["transactionId"] == transaction_id)
