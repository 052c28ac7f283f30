"""Webhook fixtures: a live receiver, insecure destinations allowed (loopback, http)."""

from __future__ import annotations

from typing import Any

import pytest

from pixgate.core.db.pool import Connection
from pixgate.runtime import Runtime
from pixgate.webhooks.service import destinations
from tests.builders import count_sent


@pytest.fixture(autouse=True)
async def no_silent_destinations() -> None:
    """Each test starts with no destination remembered as silent: a receiver of an earlier
    test that hung may have had the port this test's receiver gets."""
    destinations.forget()


@pytest.fixture
def insecure(rt: Runtime) -> Runtime:
    """Loopback and http:// destinations allowed (the development setting)."""
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    return rt


@pytest.fixture
def api_on(insecure: Runtime) -> Runtime:
    insecure.settings = insecure.settings.model_copy(update={"webhook_api_enabled": True})
    return insecure


_counter = iter(range(1, 10**9))


async def insert_transaction(
    conn: Connection,
    account_id: int,
    *,
    status: str = "CONFIRMED",
    operation: str = "WITHDRAW",
    kind: str = "cash_out",
    amount: int = 12345,
    fee: int = 50,
    parent_id: int | None = None,
    **columns: Any,
) -> int:
    """A transaction row as the money helpers leave it (their services are not ours to call)."""
    n = next(_counter)
    values: dict[str, Any] = {
        "account_id": account_id,
        "operation": operation,
        "kind": kind,
        "status": status,
        "external_id": f"ext-{n}",
        "amount": amount,
        "fee": fee,
        "end_to_end_id": f"E12345678202611221403{n:011d}",
        "pix_key": "maria@example.com",
        "pix_key_type": "EMAIL",
        "description": "Pedido",
        "counterpart": {
            "name": "Maria Souza",
            "document": "12345678909",
            "bank": {
                "bankISPB": "60701190",
                "bankName": "ITAU",
                "bankCode": "341",
                "accountBranch": "0001",
                "accountNumber": "123456",
            },
        },
        "parent_id": parent_id,
        **columns,
    }
    names = ", ".join(values)
    marks = ", ".join(f"${i + 1}" for i in range(len(values)))
    row = await conn.fetchrow(
        f"INSERT INTO transactions ({names}, processed_at) VALUES ({marks}, now()) "
        "RETURNING id, created_at",
        *values.values(),
    )
    assert row is not None
    if operation == "WITHDRAW" and status != "ERROR":
        await count_sent(conn, account_id, amount, row["created_at"])
    transaction_id: int = row["id"]
    return transaction_id


async def make_due(rt: Runtime) -> None:
    """Bring every scheduled retry to now (instead of waiting for the backoff)."""
    async with rt.db.connection() as conn:
        await conn.execute("UPDATE jobs SET run_at = now() WHERE status = 'queued'")
