"""The core every outgoing payment shares: the PENDING payout, its hold, its limits, its job.

Every payout is accepted by one database function, `payout_accept()`, whose mode says what
differs (`AcceptMode`). A cash-out and a QR cash-out to another bank go through
`create_pending`: one statement (`payout_create()`) writes the row and accepts it, or
refuses and writes nothing. A DICT transfer and a charge's split payout write their own
PENDING row (each has its own idempotency rule) and a QR cash-out paying one of our charges
its settled one; each then calls `accept`, in its own transaction. Settlement is
`payouts.service.settlement` for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from pixgate.accounts.public import Account, Terms, fees
from pixgate.core.db.pool import Connection
from pixgate.core.errors import (
    InsufficientBalance,
    NotFound,
    PixgateError,
    TryAgain,
)
from pixgate.core.labels import TransactionStatus
from pixgate.core.settings import Settings
from pixgate.jobs.public import queue as jobs
from pixgate.payouts import rules
from pixgate.payouts.queries import payments
from pixgate.payouts.rules import AcceptMode, Window
from pixgate.payouts.service import external_ids
from pixgate.payouts.service import limits as limit_rules
from pixgate.provider.base import Instructions
from pixgate.runtime import Runtime

# Every outgoing PIX is priced by the account's `cash_out` fee.
FEE_KEY = "cash_out"
# A payout priced from terms that changed meanwhile is priced again, at most this often.
TERMS_ATTEMPTS = 3
IN_HOUSE_MODES = frozenset({AcceptMode.IN_HOUSE, AcceptMode.IN_HOUSE_COUNTED})
"""The modes of a payout settled in the house at once: no settlement job."""


class KeyInTheHouse(Exception):
    """`create_pending` wrote nothing: one of our accounts holds the payout's key, so it is
    paid in the house (`payouts.service.in_house`)."""


@dataclass(frozen=True, slots=True)
class CashOut:
    """An accepted outgoing payment, as its creator answers it."""

    transaction_id: UUID
    external_id: str
    status: TransactionStatus
    created_at: datetime


async def accept(
    conn: Connection,
    settings: Settings,
    mode: AcceptMode,
    account_id: int,
    transaction_id: int,
    *,
    amount: int,
    fee: int,
    now: datetime,
    terms: Terms | Account | None = None,
) -> bool:
    """Accept a payout whose row the caller wrote, in the caller's transaction: False, and
    nothing written, when a `COUNTED` or `IN_HOUSE_COUNTED` payout's balance is short; the
    domain error of a refusal otherwise. An `IN_HOUSE` payout is settled at once and its
    limits checked against `terms` (the locked account's), an `IN_HOUSE_COUNTED` one settled
    at once; the others get their settlement job."""
    window = limit_rules.window(settings, terms, now) if terms is not None else None
    if mode is AcceptMode.IN_HOUSE and window is None:
        raise ValueError("an in-house payout's limits are checked: pass the account's terms")
    settles_later = mode not in IN_HOUSE_MODES
    try:
        return await payments.accept(
            conn,
            payments.Acceptance(
                mode=mode,
                account_id=account_id,
                transaction_id=transaction_id,
                amount=amount,
                fee=fee,
                created_at=now,
                day_start=rules.day_start(now, settings.timezone),
                night_start=rules.night_start(now, settings.timezone),
                job=jobs.SETTLE_PAYOUT if settles_later else None,
                run_at=now + timedelta(milliseconds=settings.settlement_delay_ms)
                if settles_later
                else None,
                limits=window,
            ),
        )
    except payments.PayoutRefused as refused:
        if window is None:
            raise
        raise _refusal(refused, window, amount) from None


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


async def create_pending(
    rt: Runtime,
    account_id: int,
    payout: PendingPayout,
    *,
    instructions: Instructions,
) -> CashOut:
    """The PENDING row, its settlement job, the hold and the limit count, in one statement.

    `payments.create_payout` is one round trip and its own transaction (it was seven round
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
            held = await payments.create_payout(
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
            if refused.reason == "house":
                raise KeyInTheHouse(payout.pix_key) from None
            raise _refusal(refused, window, payout.amount) from None
        if held is None:
            async with rt.db.connection() as conn:
                raise await external_ids.duplicate(conn, account_id, payout.external_id)
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
