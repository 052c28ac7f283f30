"""An event stores facts under names of its own, so its payloads never depend on the columns
of `transactions`: an event stored as a row snapshot (as `record_event()` wrote them before
facts) renders the same bytes as the facts of the same payment, for every event type,
status and version, and both still do after the columns they were read from are renamed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from pixgate.core.db.pool import Connection
from pixgate.core.money import json_number
from pixgate.runtime import Runtime
from pixgate.webhooks.rules import event_facts, payloads
from pixgate.webhooks.rules.webhooks import EventType, WebhookVersion
from pixgate.webhooks.service import outbox as events
from tests.helpers import make_account
from tests.webhooks.conftest import insert_transaction

SNAPSHOT_EVENT = """
    INSERT INTO events (account_id, type, transaction_id, data)
    SELECT $1, $2, $3, jsonb_build_object(
               'transaction', to_jsonb(t), 'parent', to_jsonb(p), 'extra', $4::jsonb)
    FROM (SELECT 1) AS one
    LEFT JOIN transactions t ON t.id = $3 AND t.account_id = $1
    LEFT JOIN transactions p ON p.id = t.parent_id
    RETURNING id
"""
"""An event exactly as `record_event()` stored one before facts: the rows themselves."""

RENAMED = (
    "amount",
    "fee",
    "status",
    "operation",
    "external_id",
    "end_to_end_id",
    "pix_key",
    "description",
    "counterpart",
    "details",
    "error_code",
    "error_message",
    "processed_at",
    "transaction_id",
    "idempotency_key",
)
"""Every column a snapshot's payload was read from."""

_MED_CASE = {
    "id": 31,
    "status": "RECEIVED",
    "reason": "REFUND_REQUEST",
    "originalTransaction": {"amount": 150.0, "type": "PIX"},
    "blockedAmount": 150.0,
}


@dataclass(frozen=True)
class Case:
    type: EventType
    status: str = "CONFIRMED"
    operation: str = "WITHDRAW"
    kind: str = "cash_out"
    refunds: str | None = None
    """The operation of the payment the event's transaction refunds."""
    columns: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    no_transaction: bool = False

    @property
    def versions(self) -> tuple[WebhookVersion, ...]:
        if self.type.startswith("med_"):
            return (WebhookVersion.V1,)
        return (WebhookVersion.V1, WebhookVersion.V2)


_FAILED = {"error_code": "ORDER_REJECTED", "error_message": "destination bank rejected it"}
CASES = [
    Case(EventType.CASH_OUT, columns={"idempotency_key": "5b8f0a54-2f7e-4a8e-9d2c-1f1f7c3a9b10"}),
    Case(EventType.CASH_OUT, status="ERROR", columns=_FAILED | {"end_to_end_id": None}),
    Case(EventType.CASH_OUT, status="PENDING"),
    Case(
        EventType.CASH_IN,
        operation="PAYMENT",
        kind="cash_in",
        columns={"details": {"txid": "7f3k2p9q8r1s4t6u5v0w3x2y1z"}, "counterpart": None},
        extra={"metadata": {"splitOf": "invoice-77"}},
    ),
    Case(EventType.CASH_IN, operation="PAYMENT", kind="cash_in", extra={"txId": "cobTx01"}),
    Case(
        EventType.REFUND_IN,
        operation="REFUND_IN",
        kind="refund_in",
        refunds="PAYMENT",
        columns={"details": {"providerTransactionId": "5e0c9a77-3b1d-4e38-9a57-0c6f0f8c2a11"}},
    ),
    Case(
        EventType.REFUND_IN,
        status="ERROR",
        operation="REFUND_IN",
        kind="refund_in",
        refunds="PAYMENT",
        columns=_FAILED,
    ),
    Case(EventType.REFUND_OUT, operation="REFUND_OUT", kind="refund_out", refunds="WITHDRAW"),
    Case(EventType.MED_CREATED, operation="PAYMENT", kind="cash_in", extra={"med": _MED_CASE}),
    Case(EventType.MED_ACCEPTED, extra={"med": _MED_CASE}, no_transaction=True),
    Case(EventType.MED_REJECTED, operation="PAYMENT", kind="cash_in", extra={"med": _MED_CASE}),
]


async def _transaction(conn: Connection, account_id: int, case: Case) -> int | None:
    if case.no_transaction:
        return None
    parent_id = None
    if case.refunds is not None:
        parent_id = await insert_transaction(
            conn,
            account_id,
            operation=case.refunds,
            kind="cash_in" if case.refunds == "PAYMENT" else "cash_out",
            amount=20000,
            details={"txid": "parentTx42"},
        )
    return await insert_transaction(
        conn,
        account_id,
        status=case.status,
        operation=case.operation,
        kind=case.kind,
        parent_id=parent_id,
        **case.columns,
    )


async def _bodies(conn: Connection, event_id: int, versions: tuple[str, ...]) -> list[bytes]:
    """The bodies the deliverer POSTs for the stored event, each version, rendered as if the
    event were the first one (id and time fixed, so two events of one payment compare)."""
    data = await conn.fetchval("SELECT data FROM events WHERE id = $1", event_id)
    kind = await conn.fetchval("SELECT type FROM events WHERE id = $1", event_id)
    at = datetime(2026, 11, 22, 14, 3, 7, tzinfo=UTC)
    facts = event_facts.read(1, kind, at, data)
    return [orjson.dumps(payloads.render(facts, v), default=json_number) for v in versions]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.type}-{c.status}")
async def test_a_snapshot_and_facts_render_the_same_before_and_after_a_rename(
    rt: Runtime, case: Case
) -> None:
    account = await make_account(rt)
    async with rt.db.connection() as conn, conn.transaction():
        transaction_id = await _transaction(conn, account.account_id, case)
        snapshot_id = await conn.fetchval(
            SNAPSHOT_EVENT, account.account_id, case.type, transaction_id, case.extra
        )
        facts_id = await events.record(
            conn,
            account_id=account.account_id,
            type=case.type,
            transaction_id=transaction_id,
            extra=case.extra,
        )
    async with rt.db.connection() as conn:
        stored = await conn.fetchval("SELECT data FROM events WHERE id = $1", facts_id)
        assert stored["version"] == event_facts.FACTS_VERSION
        assert set(stored) == {"version", "payment", "original", "extra"}
        assert (stored["payment"] is None) == case.no_transaction
        assert (stored["original"] is None) == (case.refunds is None)
        before = await _bodies(conn, facts_id, case.versions)
        assert await _bodies(conn, snapshot_id, case.versions) == before
        for body in before:
            assert body.startswith(b"{")

        renames = conn.transaction()  # rolled back, for the next tests
        await renames.start()
        try:
            for column in RENAMED:
                await conn.execute(
                    f"ALTER TABLE transactions RENAME COLUMN {column} TO old_{column}"
                )
            assert await _bodies(conn, snapshot_id, case.versions) == before
            assert await _bodies(conn, facts_id, case.versions) == before
        finally:
            await renames.rollback()
