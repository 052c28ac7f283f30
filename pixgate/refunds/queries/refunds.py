"""Refund rows, written by the database functions of `sql/050_refunds.sql` (the one home of
the refundable-balance rule, the refund window and a refund's hold or credit).

`create`, `credit_return` and `settle_in_house` run in the caller's transaction and never
commit: a service opens one, and so can another use case that refunds as part of its own
work (an approved MED case creates its refund, kind `med`, in the transaction that closes the
case). A refusal raises the domain error of its SQLSTATE; the database function has then
written nothing, but the caller's transaction is aborted (roll it back, or call inside a
savepoint).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from pixgate.core.db.faults import Refused
from pixgate.core.db.pool import Connection
from pixgate.core.errors import (
    InsufficientBalance,
    NotFound,
    PixgateError,
    RefundAmountExceeded,
    RefundDeadlineExceeded,
)
from pixgate.core.labels import OperationType, TransactionStatus
from pixgate.core.money import format_amount, to_decimal
from pixgate.jobs.public import DELIVER_WEBHOOK, SETTLE_PAYOUT, wake_workers
from pixgate.refunds.rules import Devolucao, Natureza, RefundKind


@dataclass(frozen=True, slots=True)
class Refund:
    """A refund as stored: a REFUND_IN (returned to a payer) or a REFUND_OUT (returned to us)."""

    id: int
    transaction_id: UUID
    account_id: int
    operation: OperationType
    kind: RefundKind
    status: TransactionStatus
    external_id: str | None
    amount: int
    end_to_end_id: str | None
    description: str | None
    natureza: Natureza | None
    provider_transaction_id: str | None
    error_code: str | None
    error_message: str | None
    created_at: datetime
    processed_at: datetime | None
    original_id: int
    original_end_to_end_id: str | None

    def devolucao(self) -> Devolucao:
        """This refund of a received PIX as a `Devolucao`."""
        return Devolucao(
            id=self.external_id or "",
            rtr_id=self.end_to_end_id or "",
            amount=self.amount,
            natureza=self.natureza or Natureza.ORIGINAL,
            description=self.description,
            status=self.status,
            requested_at=self.created_at,
            settled_at=self.processed_at,
            error_message=self.error_message,
        )


@dataclass(frozen=True, slots=True)
class NewRefund:
    """A refund of a received PIX to hold and queue for settlement."""

    account_id: int
    original_id: int
    kind: RefundKind
    external_id: str | None
    amount: int
    end_to_end_id: str
    """The refund's own end-to-end id (`D...`, its `rtrId`)."""
    description: str | None
    natureza: Natureza
    created_at: datetime
    run_at: datetime
    """When its settlement job is due."""
    window_days: int | None
    """Calendar days after the original was credited in which it may be refunded; None: any."""
    timezone: str
    """Whose calendar days."""
    details: dict[str, Any]
    """Kept in `transactions.details` beside `natureza` (the provider's and the original's ids)."""


SELECT_REFUNDS = """
    SELECT r.*, o.end_to_end_id AS original_end_to_end_id
    FROM transactions r JOIN transactions o ON o.id = r.parent_id
"""


def refund_of(row: asyncpg.Record) -> Refund:
    details: dict[str, Any] = row["details"] or {}
    return Refund(
        id=row["id"],
        transaction_id=row["transaction_id"],
        account_id=row["account_id"],
        operation=OperationType(row["operation"]),
        kind=RefundKind(row["kind"]),
        status=TransactionStatus(row["status"]),
        external_id=row["external_id"],
        amount=row["amount"],
        end_to_end_id=row["end_to_end_id"],
        description=row["description"],
        natureza=None if (natureza := details.get("natureza")) is None else Natureza(natureza),
        provider_transaction_id=details.get("providerTransactionId"),
        error_code=row["error_code"],
        error_message=row["error_message"],
        created_at=row["created_at"],
        processed_at=row["processed_at"],
        original_id=row["parent_id"],
        original_end_to_end_id=row["original_end_to_end_id"],
    )


def _not_refundable(refusal: Refused) -> PixgateError:
    if refusal.detail == "in_house":
        return NotFound(
            "the cash-out was paid to an account of this gateway: its receiver returns it "
            "with a refund"
        )
    return NotFound("the transaction does not exist or is not a refundable transaction")


def _exceeded(refusal: Refused) -> PixgateError:
    left = int(refusal.detail or 0)
    return RefundAmountExceeded(
        f"the refunds would exceed the original amount: {format_amount(left)} is left to refund",
        details={"refundable": to_decimal(left)},
    )


def _closed(refusal: Refused) -> PixgateError:
    return RefundDeadlineExceeded(
        f"the refund window closed at the end of {refusal.detail}",
        details={"lastDay": refusal.detail},
    )


ERRORS: dict[str, Callable[[Refused], PixgateError]] = {
    "PXR00": _not_refundable,
    "PXR01": _exceeded,
    "PXR02": _closed,
    "PXB01": lambda _: InsufficientBalance("available balance is less than the refund"),
}
"""The domain error of each refusal of 050_refunds.sql (`Refused.as_error`)."""


async def _run(conn: Connection, query: str, *args: Any) -> asyncpg.Record | None:
    """One call of a refund function; its refusal raised as its domain error."""
    try:
        return await conn.fetchrow(query, *args)
    except Refused as refusal:
        raise refusal.as_error(ERRORS) from None


async def refundable(conn: Connection, original_id: int) -> int:
    """What is left to refund of the transaction (`refund_left()`); read it while holding
    the original's row lock for an answer that holds until the caller commits."""
    left: int | None = await conn.fetchval("SELECT refund_left($1)", original_id)
    return max(left or 0, 0)


async def create(conn: Connection, new: NewRefund) -> Refund | None:
    """The PENDING refund, its hold and its settlement job (`refund_create()`).

    None, and nothing written, when `new.external_id` is already used in the account (a
    concurrent duplicate waits for the first to commit). Raises NotFound (the original is
    not a CONFIRMED PIX received by the account), RefundAmountExceeded,
    RefundDeadlineExceeded or InsufficientBalance.
    """
    row = await _run(
        conn,
        "SELECT * FROM refund_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        new.account_id,
        new.original_id,
        new.kind,
        new.external_id,
        new.amount,
        new.end_to_end_id,
        new.description,
        {**new.details, "natureza": new.natureza},
        new.created_at,
        new.window_days,
        new.timezone,
        SETTLE_PAYOUT.name,
        new.run_at,
        SETTLE_PAYOUT.max_attempts,
    )
    if row is None:
        return None
    wake_workers(conn, new.run_at)
    return await get(conn, new.account_id, row["id"])


async def credit_return(
    conn: Connection,
    account_id: int,
    original_id: int,
    *,
    amount: int,
    end_to_end_id: str,
    at: datetime,
    ispb: str,
) -> Refund:
    """A cash-out returned by its receiver at another bank (`refund_credit()`): CONFIRMED,
    credited, its `refund_out` event written. Raises NotFound (not a CONFIRMED cash-out of
    the account, or one paid to another account of this gateway, whose ISPB is `ispb`) or
    RefundAmountExceeded."""
    row = await _run(
        conn,
        "SELECT * FROM refund_credit($1, $2, $3, $4, $5, $6, $7, $8)",
        account_id,
        original_id,
        amount,
        end_to_end_id,
        at,
        DELIVER_WEBHOOK.name,
        DELIVER_WEBHOOK.max_attempts,
        ispb,
    )
    assert row is not None
    if row["jobs"]:
        wake_workers(conn)
    refund = await get(conn, account_id, row["id"])
    assert refund is not None
    return refund


async def settle_in_house(conn: Connection, refund_id: int, *, ispb: str, at: datetime) -> bool:
    """Settle a PENDING refund of a PIX another of our accounts paid, in the house
    (`refund_settle_in_house()`): the refund CONFIRMED and the payer credited with a
    REFUND_OUT, both events written. False, and nothing written, when the PIX came from
    another bank (the settling bank returns it); True when there is nothing left for the bank
    to do (settled now, or no longer PENDING). `ispb` is the gateway's."""
    row = await conn.fetchrow(
        "SELECT * FROM refund_settle_in_house($1, $2, $3, $4, $5)",
        refund_id,
        ispb,
        at,
        DELIVER_WEBHOOK.name,
        DELIVER_WEBHOOK.max_attempts,
    )
    assert row is not None
    if row["jobs"]:
        wake_workers(conn)
    return bool(row["handled"])


async def get(conn: Connection, account_id: int, refund_id: int) -> Refund | None:
    row = await conn.fetchrow(
        f"{SELECT_REFUNDS} WHERE r.id = $1 AND r.account_id = $2", refund_id, account_id
    )
    return refund_of(row) if row is not None else None


async def by_external_id(conn: Connection, account_id: int, external_id: str) -> Refund | None:
    """The account's refund of a received PIX whose externalId (devolucao `id`) this is."""
    row = await conn.fetchrow(
        f"{SELECT_REFUNDS} WHERE r.account_id = $1 AND r.external_id = $2 "
        "AND r.operation = 'REFUND_IN'",
        account_id,
        external_id,
    )
    return refund_of(row) if row is not None else None


@dataclass(frozen=True, slots=True)
class Original:
    """The transaction a refund names, as found (whether it is refundable is the database
    function's to decide, under the original's lock)."""

    id: int
    end_to_end_id: str | None
    counterpart_ispb: str | None


def _original(row: asyncpg.Record | None) -> Original | None:
    if row is None:
        return None
    return Original(row["id"], row["end_to_end_id"], row["counterpart_ispb"])


_ORIGINAL = "SELECT id, end_to_end_id, counterpart_ispb FROM transactions WHERE account_id = $1"


async def original_by_id(conn: Connection, account_id: int, original_id: int) -> Original | None:
    """The account's transaction with this numeric id."""
    return _original(await conn.fetchrow(f"{_ORIGINAL} AND id = $2", account_id, original_id))


async def original_by_transaction_id(
    conn: Connection, account_id: int, transaction_id: UUID
) -> Original | None:
    """The account's transaction with this public UUID."""
    return _original(
        await conn.fetchrow(f"{_ORIGINAL} AND transaction_id = $2", account_id, transaction_id)
    )


async def original_by_end_to_end_id(
    conn: Connection, account_id: int, end_to_end_id: str
) -> Original | None:
    """The PIX the account received with this end-to-end id."""
    return _original(
        await conn.fetchrow(
            f"{_ORIGINAL} AND end_to_end_id = $2 AND operation = 'PAYMENT'",
            account_id,
            end_to_end_id,
        )
    )
