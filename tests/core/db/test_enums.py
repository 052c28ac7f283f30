"""The StrEnums that name stored values agree with the database: each one's members are
exactly the values its column's CHECK constraint allows, and
`ledger.queries.transactions.Transaction` declares the table's columns in the table's order
(its `from_record` is positional)."""

from __future__ import annotations

import re
from dataclasses import fields
from enum import StrEnum
from pathlib import Path

import pytest

from pixgate.core.labels import OperationType, SplitFrequency, TransactionStatus
from pixgate.jobs import queue as jobs
from pixgate.jobs.queue import JobStatus
from pixgate.ledger.queries.transactions import COLUMNS, Transaction
from pixgate.med.rules import AnalysisResult, MedReason, MedStatus
from pixgate.runtime import Runtime
from pixgate.webhooks.rules.webhooks import (
    AttemptTrigger,
    DeliveryStatus,
    EventType,
    WebhookVersion,
)

CONSTRAINED: dict[str, type[StrEnum]] = {
    "ck_transactions_status": TransactionStatus,
    "ck_transactions_operation": OperationType,
    "ck_jobs_status": JobStatus,
    "ck_accounts_split_frequency": SplitFrequency,
    "ck_events_type": EventType,
    "ck_webhook_endpoints_event_type": EventType,
    "ck_webhook_endpoints_version": WebhookVersion,
    "ck_webhook_deliveries_version": WebhookVersion,
    "ck_webhook_deliveries_status": DeliveryStatus,
    "ck_webhook_attempts_trigger": AttemptTrigger,
    "ck_med_cases_status": MedStatus,
    "ck_med_cases_reason": MedReason,
    "ck_med_cases_analysis_result": AnalysisResult,
}

_LITERAL = re.compile(r"'((?:[^']|'')*)'::text")


async def _allowed(rt: Runtime, constraint: str) -> set[str]:
    async with rt.db.connection() as conn:
        definition: str | None = await conn.fetchval(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conname = $1 AND contype = 'c'",
            constraint,
        )
    assert definition is not None, f"no CHECK constraint {constraint}"
    return {value.replace("''", "'") for value in _LITERAL.findall(definition)}


@pytest.mark.parametrize(("constraint", "enum"), CONSTRAINED.items(), ids=list(CONSTRAINED))
async def test_the_enum_is_what_the_check_constraint_allows(
    rt: Runtime, constraint: str, enum: type[StrEnum]
) -> None:
    assert await _allowed(rt, constraint) == {member.value for member in enum}


async def test_transaction_declares_the_columns_in_table_order(rt: Runtime) -> None:
    async with rt.db.connection() as conn:
        columns = await conn.fetch(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = 'transactions' "
            "ORDER BY ordinal_position"
        )
    assert tuple(r["column_name"] for r in columns) == COLUMNS
    assert tuple(f.name for f in fields(Transaction)) == COLUMNS


async def test_a_transaction_read_has_its_labels_as_enums(rt: Runtime) -> None:
    async with rt.db.connection() as conn:
        account_id = await conn.fetchval("INSERT INTO accounts (name) VALUES ('e') RETURNING id")
        record = await conn.fetchrow(
            "INSERT INTO transactions (account_id, operation, kind, amount) "
            "VALUES ($1, 'PAYMENT', 'incoming', 100) RETURNING *",
            account_id,
        )
    row = Transaction.from_record(record)
    assert row.operation is OperationType.PAYMENT
    assert row.status is TransactionStatus.PENDING
    assert (row.kind, row.amount, row.account_id) == ("incoming", 100, account_id)


def test_the_job_queries_spell_only_job_statuses() -> None:
    """jobs/queue.py writes its statuses as SQL literals (the partial indexes need them so)."""
    source = Path(jobs.__file__).read_text()
    spelled = set(re.findall(r"status = '(\w+)'", source))
    spelled |= {v for pair in re.findall(r"THEN '(\w+)' ELSE '(\w+)'", source) for v in pair}
    assert spelled, "the pattern no longer finds the job queries' statuses"
    assert spelled <= {member.value for member in JobStatus}
