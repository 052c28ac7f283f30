"""The core every outgoing payment shares: the PENDING payout, its hold, its limits, its job.

A cash-out and a QR cash-out to another bank go through `hold_pending`: one statement
(`hold_payout()`) writes the row, holds the funds (amount + fee), checks the limits and
queues the settlement, or refuses and writes nothing. A DICT transfer and a charge's split
payout write their own PENDING row (each has its own idempotency rule), then hand it to
`hold_and_queue`: the same hold, count and job, in the caller's transaction, by the same
database function (`payout_hold()`). Settlement is `payouts.service.settlement` for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from pixgate.accounts.public import fees
from pixgate.core.db.pool import Connection
from pixgate.core.errors import (
    DuplicateExternalId,
    InsufficientBalance,
    NotFound,
    PixgateError,
    TryAgain,
)
from pixgate.core.labels import TransactionStatus
from pixgate.core.settings import Settings
from pixgate.jobs.public import queue as jobs
from pixgate.payouts import rules as limits
from pixgate.payouts.queries import payments
from pixgate.payouts.rules import Window
from pixgate.payouts.service import external_ids
from pixgate.payouts.service import limits as limit_rules
from pixgate.provider.base import Instructions
from pixgate.runtime import Runtime

# Every outgoing PIX is priced by the account's `cash_out` fee.
FEE_KEY = "cash_out"
# A payout priced from terms that changed meanwhile is priced again, at most this often.
TERMS_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class CashOut:
    """An accepted outgoing payment, as its creator answers it."""

    transaction_id: UUID
    external_id: str
    status: TransactionStatus
    created_at: datetime


async def hold_and_queue(
    conn: Connection,
    settings: Settings,
    account_id: int,
    transaction_id: int,
    *,
    amount: int,
    fee: int,
    now: datetime,
) -> bool:
    """False, and nothing written, when the account's available balance is short."""
    return await payments.hold_and_queue(
        conn,
        account_id,
        transaction_id,
        amount=amount,
        fee=fee,
        created_at=now,
        day_start=limits.day_start(now, settings.timezone),
        night_start=limits.night_start(now, settings.timezone),
        run_at=now + timedelta(milliseconds=settings.settlement_delay_ms),
        job=jobs.SETTLE_PAYOUT,
    )


@dataclass(frozen=True, slots=True)
class PendingPayout:
    """An outgoing PIX to be settled by the settling bank: what the PENDING row records."""

    kind: str
    external_id: str
    amount: int
    pix_key: str
    pix_key_type: str
    description: str | None
    details: dict[str, Any]


async def hold_pending(
    rt: Runtime,
    account_id: int,
    payout: PendingPayout,
    *,
    instructions: Instructions,
    duplicate: type[DuplicateExternalId] = DuplicateExternalId,
) -> CashOut:
    """The PENDING row, its settlement job, the hold and the limit count, in one statement.

    `payments.hold_payout` is one round trip and its own transaction (it was seven round
    trips, the largest single share of the API's CPU per cash-out), shared with the other
    cash-outs of the account that wait for its row meanwhile (`core.db.batches`). The fee and
    limits are priced from this process's copy of the account's terms, which the statement
    compares with the locked row: a stale copy is re-read and the payout tried again.
    The request's provider instructions are kept with the row for the provider's settlement.
    """
    now = rt.clock.now()
    run_at = now + rt.provider.settlement_delay(instructions)
    for _ in range(TERMS_ATTEMPTS):
        terms = await rt.account_terms.get(rt.db, account_id)
        if terms is None:
            raise NotFound("account not found")
        fee = fees.of(rt.settings, terms.fees, FEE_KEY, payout.amount)
        window = limit_rules.window(rt.settings, terms, now)
        try:
            held = await payments.hold_payout(
                rt.db,
                payments.Hold(
                    account_id=account_id,
                    kind=payout.kind,
                    external_id=payout.external_id,
                    amount=payout.amount,
                    fee=fee,
                    pix_key=payout.pix_key,
                    pix_key_type=payout.pix_key_type,
                    description=payout.description,
                    details=payout.details,
                    created_at=now,
                    job=jobs.SETTLE_PAYOUT,
                    run_at=run_at,
                    terms=terms,
                    limits=window,
                    instructions=instructions.value,
                ),
            )
        except payments.PayoutRefused as refused:
            if refused.reason == "terms":
                rt.account_terms.forget(account_id)
                continue
            raise _refusal(refused, window, payout.amount) from None
        if held is None:
            async with rt.db.connection() as conn:
                raise await external_ids.duplicate(conn, account_id, payout.external_id, duplicate)
        return CashOut(
            transaction_id=held.transaction_id,
            external_id=payout.external_id,
            status=TransactionStatus.PENDING,
            created_at=held.created_at,
        )
    raise TryAgain("the account's fees or limits kept changing while this payment was priced")


def _refusal(refused: payments.PayoutRefused, window: Window, amount: int) -> PixgateError:
    if refused.reason == "balance":
        return InsufficientBalance("available balance is less than amount + fee")
    return limit_rules.refusal(window, refused.reason, refused.used, amount)
