"""Outgoing payment rows (cash-out, QR cash-out, DICT transfer, split payouts), accepted and
settled by the database functions of `sql/040_payouts.sql`: every payout is accepted by
`payout_accept()` (its hold, limits and settlement job), a cash-out's through
`payout_create()`, the others' through `accept`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

import asyncpg

from pixgate.accounts.public import Terms
from pixgate.core.counterparts import Counterpart
from pixgate.core.db import faults
from pixgate.core.db.batches import Statement, StatementFailed, read_by_key
from pixgate.core.db.faults import Refused
from pixgate.core.db.pool import Connection, Database
from pixgate.core.labels import TransactionStatus
from pixgate.jobs.public import DELIVER_WEBHOOK, JobKind, SettlePayout, wake_workers
from pixgate.ledger.public import TRANSACTIONS_BY_IDS, Transaction
from pixgate.payouts.rules import AcceptMode, Window

T = TypeVar("T")
R = TypeVar("R")

REFUSALS = {
    "PXT01": "terms",
    "PXB01": "balance",
    "PXL00": "transaction",
    "PXL01": "daily",
    "PXL02": "night",
    "PXH01": "house",
}
"""The SQLSTATEs of a payout's refusal by `payout_accept()` (and `limit_check()`, which it
runs), by reason: its terms changed, its balance, its per-transaction, daily or night limit;
and by `payout_create()`: its key is one of our accounts' (paid in the house instead)."""


def _refused(refusal: Refused) -> PayoutRefused:
    """A refusal's detail is the limit's total, the payout included (a limit refusal)."""
    return PayoutRefused(
        REFUSALS[refusal.sqlstate], int(refusal.detail) if refusal.detail else None
    )


ERRORS = dict.fromkeys(REFUSALS, _refused)
"""How `Refused.as_error` turns each refusal of the payout functions into PayoutRefused."""


class PayoutRefused(Exception):
    """payout_create() wrote nothing: `reason` is a value of REFUSALS; `used` the limit's total."""

    def __init__(self, reason: str, used: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.used = used


async def by_external_id(conn: Connection, account_id: int, external_id: str) -> UUID | None:
    found: UUID | None = await conn.fetchval(
        "SELECT transaction_id FROM transactions WHERE account_id = $1 AND external_id = $2",
        account_id,
        external_id,
    )
    return found


async def insert_pending(
    conn: Connection,
    *,
    account_id: int,
    kind: str,
    external_id: str | None,
    amount: int,
    fee: int,
    pix_key: str | None,
    pix_key_type: str | None,
    description: str | None,
    details: dict[str, Any],
    created_at: datetime,
    parent_id: int | None = None,
) -> Transaction | None:
    """A PENDING WITHDRAW; None when the externalId is already taken (a concurrent duplicate)."""
    row = await conn.fetchrow(
        """
        INSERT INTO transactions (account_id, operation, kind, status, external_id, amount, fee,
                                  pix_key, pix_key_type, description, details, created_at,
                                  parent_id)
        VALUES ($1, 'WITHDRAW', $2, 'PENDING', $3, $4, $5, $6, $7, $8, $9, $10, $11)
        ON CONFLICT (account_id, external_id) DO NOTHING
        RETURNING *
        """,
        account_id,
        kind,
        external_id,
        amount,
        fee,
        pix_key,
        pix_key_type,
        description,
        details,
        created_at,
        parent_id,
    )
    return None if row is None else Transaction.from_record(row)


TRANSACTIONS_BY_ID = read_by_key(TRANSACTIONS_BY_IDS, "id", Transaction.from_record)


async def get(db: Database, transaction_id: int) -> Transaction | None:
    """A transaction by its primary key, read with the others asked for meanwhile."""
    return await db.batcher(TRANSACTIONS_BY_ID).submit("transactions", transaction_id)


@dataclass(frozen=True, slots=True)
class Settlement:
    """A payout's final state as the settling bank decided it."""

    transaction_id: int
    status: TransactionStatus
    end_to_end_id: str
    counterpart: Counterpart | None
    error_code: str | None
    error_message: str | None
    processed_at: datetime
    event_type: str


async def settle_payout(
    db: Database, account_id: int, settlement: Settlement
) -> TransactionStatus | None:
    """PENDING -> final once, its event, the hold posted or voided: the `settle_payout()`
    function, run by `settle_payouts()` in a transaction it may share.

    Settlements that arrive while their account's lane is busy (`Database.lane`) go in one
    statement (`core.db.batches`), ahead of the lane's new cash-outs (`row_queue`'s urgent
    work): each account's together, the accounts in ascending order. The final status; None
    when another run already finished it (nothing written)."""
    return await db.batcher(SETTLE_PAYOUTS).submit(db.lane(account_id), (account_id, settlement))


async def _send_settlements(
    conn: Connection, batch: Sequence[tuple[int, Settlement]]
) -> list[TransactionStatus | Exception | None]:
    order = _by_account(batch, lambda item: item[0])
    settlements = [batch[i][1] for i in order]
    rows = await conn.fetch(
        "SELECT * FROM settle_payouts($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        " ORDER BY ord",
        [s.transaction_id for s in settlements],
        [s.status for s in settlements],
        [s.end_to_end_id for s in settlements],
        [None if s.counterpart is None else s.counterpart.document_json() for s in settlements],
        [None if s.counterpart is None else s.counterpart.ispb for s in settlements],
        [None if s.counterpart is None else s.counterpart.account_id for s in settlements],
        [s.error_code for s in settlements],
        [s.error_message for s in settlements],
        [s.processed_at for s in settlements],
        [s.event_type for s in settlements],
        DELIVER_WEBHOOK.name,
        DELIVER_WEBHOOK.max_attempts,
    )
    if any(row["jobs"] for row in rows):
        wake_workers(conn)
    return _unsorted(
        order,
        [
            _failure(row)
            if row["err_state"]
            else TransactionStatus(row["status"])
            if row["account_id"] is not None
            else None
            for row in rows
        ],
    )


SETTLE_PAYOUTS = Statement(_send_settlements, urgent=True)


@dataclass(frozen=True, slots=True)
class Hold:
    """A payout to hold: its PENDING row and settlement job, priced from `terms`."""

    account_id: int
    kind: str
    external_id: str
    amount: int
    fee: int
    pix_key: str
    pix_key_type: str
    description: str | None
    details: dict[str, Any]
    created_at: datetime
    job: JobKind[SettlePayout]
    run_at: datetime
    terms: Terms
    limits: Window
    instructions: str | None
    """What the request told the provider, kept for it (`provider.instructions`)."""


@dataclass(frozen=True, slots=True)
class Held:
    """A payout `payout_create()` accepted: its PENDING row's keys and time."""

    id: int
    transaction_id: UUID
    created_at: datetime


async def create_payout(db: Database, hold: Hold) -> Held | None:
    """The PENDING row, its settlement job, the hold and the limit check: the
    `payout_create()` function, run by `payouts_create()` in a transaction it may share.

    Holds that arrive while their account's lane is busy (`Database.lane`) go in one
    statement (`core.db.batches`): each account's together, the accounts in ascending order,
    each payout rolled back alone if refused. `hold.terms` is the account row the fee and
    limits were computed from; if the locked row differs, the refusal's reason is "terms".
    Raises PayoutRefused; None: the externalId was already used (nothing written)."""
    return await db.batcher(CREATE_PAYOUTS).submit(db.lane(hold.account_id), hold)


def _by_account(items: Sequence[T], account: Callable[[T], int]) -> list[int]:
    """The order of `items` sorted by account, each account's in their order: a statement
    for several accounts locks their rows in ascending order, as every such statement does,
    so none waits for another in a cycle."""
    return sorted(range(len(items)), key=lambda i: account(items[i]))


def _unsorted(order: Sequence[int], results: Sequence[R]) -> list[R]:
    """`results` of the items taken in `order` (`_by_account`), back in the items' order."""
    out: list[R] = list(results)
    for place, i in enumerate(order):
        out[i] = results[place]
    return out


async def _send_holds(conn: Connection, batch: Sequence[Hold]) -> list[Held | Exception | None]:
    order = _by_account(batch, lambda h: h.account_id)
    holds = [batch[i] for i in order]
    rows = await conn.fetch(
        "SELECT * FROM payouts_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
        " $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) ORDER BY ord",
        [h.account_id for h in holds],
        [h.kind for h in holds],
        [h.external_id for h in holds],
        [h.amount for h in holds],
        [h.fee for h in holds],
        [h.pix_key for h in holds],
        [h.pix_key_type for h in holds],
        [h.description for h in holds],
        [h.details for h in holds],
        [h.created_at for h in holds],
        [h.job.name for h in holds],
        [h.run_at for h in holds],
        [h.job.max_attempts for h in holds],
        [h.terms.fees for h in holds],
        [[h.terms.transaction_limit, h.terms.daily_limit, h.terms.night_limit] for h in holds],
        [h.limits.per_transaction for h in holds],
        [h.limits.daily for h in holds],
        [h.limits.nightly for h in holds],
        [h.limits.day_start for h in holds],
        [h.limits.night_start for h in holds],
        [h.instructions for h in holds],
    )
    accepted = [h.run_at for h, row in zip(holds, rows, strict=True) if row["id"] is not None]
    if accepted:
        wake_workers(conn, min(accepted))
    return _unsorted(order, [_hold_outcome(row) for row in rows])


def _hold_outcome(row: asyncpg.Record) -> Held | Exception | None:
    if row["err_state"] is None:
        pk = row["id"]
        return None if pk is None else Held(pk, row["transaction_id"], row["created_at"])
    return _failure(row)


def _failure(row: asyncpg.Record) -> Exception:
    """A batch element's failure, reported in its row, as pixgate's error (`faults`)."""
    state, message = row["err_state"], row["err_message"]
    error = faults.from_state(state, message, row.get("err_detail"))
    if isinstance(error, Refused):
        return error.as_error(ERRORS)
    return error or StatementFailed(state, message)


CREATE_PAYOUTS = Statement(_send_holds)


@dataclass(frozen=True, slots=True)
class Acceptance:
    """A payout whose row its service wrote, to accept (`payout_accept()`): `mode` says how,
    `job` is its settlement job (None when it settles at once, in the house), `limits` the
    window a mode that checks the limits checks them against."""

    mode: AcceptMode
    account_id: int
    transaction_id: int
    amount: int
    fee: int
    created_at: datetime
    day_start: datetime
    night_start: datetime | None
    job: JobKind[SettlePayout] | None
    run_at: datetime | None
    limits: Window | None


async def accept(conn: Connection, acceptance: Acceptance) -> bool:
    """The hold, the limits and the settlement job of a written payout, in the caller's
    transaction. False, and nothing written, when a `COUNTED` payout's balance is short;
    PayoutRefused for a refusal of the other modes (the caller's transaction then rolls back).
    """
    a, job, limits = acceptance, acceptance.job, acceptance.limits
    try:
        held: bool = await conn.fetchval(
            "SELECT payout_accept($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL, NULL,"
            " $12, $13, $14)",
            a.mode,
            a.account_id,
            a.transaction_id,
            a.amount,
            a.fee,
            a.created_at,
            a.day_start,
            a.night_start,
            job.name if job else None,
            a.run_at,
            job.max_attempts if job else None,
            limits.per_transaction if limits else None,
            limits.daily if limits else None,
            limits.nightly if limits else None,
        )
    except Refused as refusal:
        raise refusal.as_error(ERRORS) from None
    if held and job is not None:
        wake_workers(conn, a.run_at)
    return held
