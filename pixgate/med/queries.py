"""MED case rows: opened, taken in and ended through the functions of `sql/060_med.sql`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from pixgate.core.db.pool import Connection
from pixgate.med.rules import (
    AnalysisResult,
    Bank,
    MedCase,
    MedReason,
    MedStatus,
    OriginalTransaction,
)

_SELECT = """
    SELECT m.*, t.amount AS original_amount, t.counterpart AS original_counterpart,
           t.processed_at AS original_received_at
    FROM med_cases m
    LEFT JOIN transactions t ON t.id = m.original_transaction_id
"""


def _bank(value: dict[str, Any]) -> Bank:
    return Bank(ispb=value["ispb"], name=value.get("name"))


def _case(row: asyncpg.Record) -> MedCase:
    original = None
    if row["original_transaction_id"] is not None:
        payer = row["original_counterpart"] or {}
        original = OriginalTransaction(
            id=row["original_transaction_id"],
            amount=row["original_amount"],
            payer_name=payer.get("name"),
            payer_document=payer.get("document"),
            received_at=row["original_received_at"],
        )
    result = row["analysis_result"]
    return MedCase(
        id=row["id"],
        account_id=row["account_id"],
        end_to_end_id=row["end_to_end_id"],
        status=MedStatus(row["status"]),
        reason=MedReason(row["reason"]),
        cause=row["cause"],
        description=row["description"],
        analysis_result=AnalysisResult(result) if result else None,
        analysis_details=row["analysis_details"],
        requesting_bank=_bank(row["requesting_bank"]),
        contested_bank=_bank(row["contested_bank"]),
        original=original,
        blocked_amount=row["blocked_amount"],
        refund_transaction_id=row["refund_transaction_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


@dataclass(frozen=True, slots=True)
class ReceivedPix:
    """The account's received PIX a case names, with the bank that sent it."""

    id: int
    bank: Bank


async def received_pix(conn: Connection, account_id: int, end_to_end_id: str) -> ReceivedPix | None:
    row = await conn.fetchrow(
        """
        SELECT id, counterpart_ispb, counterpart -> 'bank' ->> 'bankName' AS bank_name
        FROM transactions
        WHERE account_id = $1 AND end_to_end_id = $2 AND operation = 'PAYMENT'
          AND status = 'CONFIRMED'
        """,
        account_id,
        end_to_end_id,
    )
    if row is None:
        return None
    return ReceivedPix(
        id=row["id"], bank=Bank(ispb=row["counterpart_ispb"] or "", name=row["bank_name"])
    )


@dataclass(frozen=True, slots=True)
class NewCase:
    account_id: int
    end_to_end_id: str
    cause: str | None
    description: str | None
    requesting_bank: Bank
    contested_bank: Bank
    original_transaction_id: int | None
    at: datetime


async def insert(conn: Connection, case: NewCase) -> int | None:
    """The case, OPEN; None when the PIX already has a case under analysis."""
    case_id: int | None = await conn.fetchval(
        """
        INSERT INTO med_cases (account_id, end_to_end_id, status, reason, cause, description,
                               requesting_bank, contested_bank, original_transaction_id,
                               created_at, updated_at)
        VALUES ($1, $2, 'OPEN', 'REFUND_REQUEST', $3, $4, $5, $6, $7, $8, $8)
        ON CONFLICT (account_id, end_to_end_id) WHERE status IN ('OPEN', 'RECEIVED')
        DO NOTHING
        RETURNING id
        """,
        case.account_id,
        case.end_to_end_id,
        case.cause,
        case.description,
        {"ispb": case.requesting_bank.ispb, "name": case.requesting_bank.name},
        {"ispb": case.contested_bank.ispb, "name": case.contested_bank.name},
        case.original_transaction_id,
        case.at,
    )
    return case_id


async def take_in(conn: Connection, case_id: int, at: datetime) -> int:
    """OPEN -> RECEIVED, blocking the disputed amount; the amount blocked."""
    blocked: int = await conn.fetchval("SELECT med_take_in($1, $2)", case_id, at)
    return blocked


async def release(
    conn: Connection,
    case_id: int,
    *,
    status: MedStatus,
    reason: MedReason | None,
    result: AnalysisResult | None,
    details: str | None,
    at: datetime,
) -> int:
    """The case ends in `status`, its block given back; the amount that was blocked."""
    released: int = await conn.fetchval(
        "SELECT med_release($1, $2, $3, $4, $5, $6)",
        case_id,
        status.value,
        reason.value if reason else None,
        result.value if result else None,
        details,
        at,
    )
    return released


async def set_refund(conn: Connection, case_id: int, refund_transaction_id: int) -> None:
    await conn.execute(
        "UPDATE med_cases SET refund_transaction_id = $2 WHERE id = $1",
        case_id,
        refund_transaction_id,
    )


async def get(conn: Connection, account_id: int, case_id: int) -> MedCase | None:
    row = await conn.fetchrow(
        f"{_SELECT} WHERE m.account_id = $1 AND m.id = $2", account_id, case_id
    )
    return _case(row) if row else None


async def lock(conn: Connection, account_id: int, case_id: int) -> MedCase | None:
    """The case, its row locked until the caller's transaction ends."""
    row = await conn.fetchrow(
        f"{_SELECT} WHERE m.account_id = $1 AND m.id = $2 FOR NO KEY UPDATE OF m",
        account_id,
        case_id,
    )
    return _case(row) if row else None


async def open_case_of(conn: Connection, account_id: int, end_to_end_id: str) -> int | None:
    """The case under analysis of that PIX, locked."""
    case_id: int | None = await conn.fetchval(
        """
        SELECT id FROM med_cases
        WHERE account_id = $1 AND end_to_end_id = $2 AND status IN ('OPEN', 'RECEIVED')
        FOR NO KEY UPDATE
        """,
        account_id,
        end_to_end_id,
    )
    return case_id


@dataclass(frozen=True, slots=True)
class CaseFilter:
    status: MedStatus | None
    is_reconciled: bool | None
    start: datetime | None
    end: datetime | None


_MATCHING = """
    m.account_id = $1
    AND ($2::text IS NULL OR m.status = $2)
    AND ($3::boolean IS NULL OR (m.original_transaction_id IS NOT NULL) = $3)
    AND ($4::timestamptz IS NULL OR m.created_at >= $4)
    AND ($5::timestamptz IS NULL OR m.created_at <= $5)
"""


async def page(
    conn: Connection, account_id: int, where: CaseFilter, *, limit: int, offset: int
) -> tuple[Sequence[MedCase], int]:
    """One page of the account's cases, newest first, and how many match in all."""
    args = (
        account_id,
        where.status.value if where.status else None,
        where.is_reconciled,
        where.start,
        where.end,
    )
    total: int = await conn.fetchval(
        f"SELECT count(*) FROM med_cases m WHERE {_MATCHING}",  # noqa: S608 - constants
        *args,
    )
    rows = await conn.fetch(
        f"{_SELECT} WHERE {_MATCHING} ORDER BY m.created_at DESC, m.id DESC LIMIT $6 OFFSET $7",
        *args,
        limit,
        offset,
    )
    return [_case(row) for row in rows], total
