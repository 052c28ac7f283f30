"""MED cases: opened by the payer's bank, taken in, analysed, listed.

Each step is one transaction: the case's state, its balance move (`sql/060_med.sql`) and
its webhook event (`med_created`, `med_accepted`, `med_rejected`) commit together. An
approved case's refund is created in the analysis' transaction by the refund rule every
refund goes through (`refunds.queries.refunds`), so it can never exceed what is left of the PIX.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from pixgate.core.db.pool import Connection
from pixgate.core.errors import Conflict, NotFound, ValidationFailed
from pixgate.core.ids import is_end_to_end_id
from pixgate.med import queries as med_rows
from pixgate.med.rules import (
    OPEN_STATUSES,
    AnalysisResult,
    Bank,
    MedCase,
    MedReason,
    MedStatus,
    parse_cause,
    refund_nature,
    requesting_ispb,
    wire,
)
from pixgate.refunds.public import service as refunds
from pixgate.runtime import Runtime
from pixgate.webhooks.public import EventType
from pixgate.webhooks.public import outbox as events


@dataclass(frozen=True, slots=True)
class CaseRequest:
    """What the payer's bank sends (the sandbox plays that bank)."""

    end_to_end_id: str
    reason: MedReason
    cause: str | None
    description: str | None


async def request(rt: Runtime, account_id: int, req: CaseRequest) -> MedCase:
    """A refund request opens a case; a cancellation ends the PIX's case under analysis."""
    if not is_end_to_end_id(req.end_to_end_id):
        raise ValidationFailed(["endToEndId must be a 32-character end-to-end id (E...)"])
    if req.reason is MedReason.REFUND_CANCELLATION:
        return await _cancel(rt, account_id, req.end_to_end_id)
    return await _open(rt, account_id, req)


async def _open(rt: Runtime, account_id: int, req: CaseRequest) -> MedCase:
    cause = parse_cause(req.cause)
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        received = await med_rows.received_pix(conn, account_id, req.end_to_end_id)
        requesting = Bank(ispb=requesting_ispb(req.end_to_end_id), name=None)
        if received is not None and received.bank.ispb == requesting.ispb:
            requesting = received.bank
        case_id = await med_rows.insert(
            conn,
            med_rows.NewCase(
                account_id=account_id,
                end_to_end_id=req.end_to_end_id,
                cause=cause.value if cause else None,
                description=req.description,
                requesting_bank=requesting,
                contested_bank=Bank(ispb=rt.settings.ispb, name=rt.settings.bank_name),
                original_transaction_id=received.id if received else None,
                at=now,
            ),
        )
        if case_id is None:
            raise Conflict("this PIX already has a MED case under analysis")
        if received is not None:
            await med_rows.take_in(conn, case_id, now)
        return await _recorded(conn, account_id, case_id, EventType.MED_CREATED)


async def _cancel(rt: Runtime, account_id: int, end_to_end_id: str) -> MedCase:
    async with rt.db.begin() as conn:
        case_id = await med_rows.open_case_of(conn, account_id, end_to_end_id)
        if case_id is None:
            raise NotFound("no MED case under analysis for this end-to-end id")
        await med_rows.release(
            conn,
            case_id,
            status=MedStatus.CANCELLED,
            reason=MedReason.REFUND_CANCELLATION,
            result=None,
            details=None,
            at=rt.clock.now(),
        )
        return await _get(conn, account_id, case_id)


async def analyse(
    rt: Runtime, account_id: int, case_id: int, result: AnalysisResult, details: str | None
) -> MedCase:
    """The case ends ANALYZED: its block released, and, when approved, returned to the payer
    by a refund of the blocked amount (no more than is left to refund of the PIX)."""
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        case = await med_rows.lock(conn, account_id, case_id)
        if case is None:
            raise NotFound("MED case not found")
        if case.status not in OPEN_STATUSES:
            raise Conflict(f"the MED case is already {case.status.value}")
        released = await med_rows.release(
            conn,
            case_id,
            status=MedStatus.ANALYZED,
            reason=None,
            result=result,
            details=details,
            at=now,
        )
        if result is AnalysisResult.APPROVED and released > 0 and case.original is not None:
            refund_id = await refunds.return_for_med(
                conn,
                rt,
                account_id,
                original_id=case.original.id,
                amount=released,
                nature=refund_nature(case.cause),
                case_id=case_id,
            )
            if refund_id is not None:
                await med_rows.set_refund(conn, case_id, refund_id)
        event = (
            EventType.MED_ACCEPTED if result is AnalysisResult.APPROVED else EventType.MED_REJECTED
        )
        return await _recorded(conn, account_id, case_id, event)


async def _get(conn: Connection, account_id: int, case_id: int) -> MedCase:
    case = await med_rows.get(conn, account_id, case_id)
    if case is None:
        raise NotFound("MED case not found")
    return case


async def _recorded(conn: Connection, account_id: int, case_id: int, event: EventType) -> MedCase:
    """The case as it now is, and its event carrying that state."""
    case = await _get(conn, account_id, case_id)
    await events.record(
        conn,
        account_id=account_id,
        type=event,
        transaction_id=case.original.id if case.original else None,
        extra={"med": wire(case)},
    )
    return case


@dataclass(frozen=True, slots=True)
class CaseQuery:
    status: MedStatus | None
    is_reconciled: bool | None
    start: datetime | None
    end: datetime | None
    page: int
    page_size: int


@dataclass(frozen=True, slots=True)
class CasePage:
    cases: list[MedCase]
    total: int
    page: int
    page_size: int

    @property
    def total_pages(self) -> int:
        return math.ceil(self.total / self.page_size)


async def list_cases(rt: Runtime, account_id: int, query: CaseQuery) -> CasePage:
    if query.start is not None and query.end is not None and query.start > query.end:
        raise ValidationFailed(["startDate must not be after endDate"])
    async with rt.db.connection() as conn:
        cases, total = await med_rows.page(
            conn,
            account_id,
            med_rows.CaseFilter(query.status, query.is_reconciled, query.start, query.end),
            limit=query.page_size,
            offset=(query.page - 1) * query.page_size,
        )
    return CasePage(list(cases), total, query.page, query.page_size)
