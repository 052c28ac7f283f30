"""Settlement of every outgoing payment: the settling bank decides, the ledger follows.

The bank is called outside any transaction; then, in one statement (`payments.settle_payout`,
its own transaction), the PENDING row becomes final exactly once (a conditional UPDATE), the
`cash_out` event is written, and the hold is posted (amount to the settling bank, fee to our
revenue) or voided (everything back to available, the amount no longer counted by the
limits). A second run of the same job changes nothing. Refunds of received PIX (REFUND_IN)
settle the same way, as a return (`refunds.service.send_return`), writing `refund_in`,
unless another of our accounts paid the PIX: then the refund settles in the house, without
the bank (`refunds.service.settle_in_house`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pixgate.core.counterparts import Counterpart
from pixgate.core.labels import OperationType, TransactionKind, TransactionStatus
from pixgate.ledger.public import Transaction
from pixgate.payouts.queries import payments
from pixgate.payouts.service import dict_transfer, metrics
from pixgate.provider.base import PaymentOrder, PaymentResult, SettlingBank
from pixgate.refunds.public import RETURN_KINDS, RefundKind
from pixgate.refunds.public import service as refunds
from pixgate.runtime import Runtime
from pixgate.webhooks.public import EventType

SETTLED_OPERATIONS = frozenset({OperationType.WITHDRAW, OperationType.REFUND_IN})
"""What the settling bank settles: payments sent, and returns of payments received."""


async def settle(rt: Runtime, transaction_id: int) -> None:
    row = await payments.get(rt.db, transaction_id)
    if (
        row is None
        or row.status != TransactionStatus.PENDING
        or row.operation not in SETTLED_OPERATIONS
    ):
        return
    hooks = hooks_for(row.kind)
    kind = str(_KINDS.get(row.kind, "other"))
    if hooks.in_house is not None and await hooks.in_house(rt, row):
        metrics.settled(kind, metrics.Outcome.IN_HOUSE)
        return
    with metrics.asking_the_bank(kind):
        result = await _ask_the_bank(rt, row, hooks)
    # sent with the account's other settlements waiting meanwhile, ahead of its new
    # cash-outs: accepted payouts are settled before more are accepted (core.db.batches)
    status = await payments.settle_payout(
        rt.db,
        row.account_id,
        payments.Settlement(
            transaction_id=transaction_id,
            status=TransactionStatus(result.status),
            end_to_end_id=result.end_to_end_id,
            counterpart=(
                Counterpart.at_another_bank(result.counterpart) if result.counterpart else None
            ),
            error_code=result.error_code,
            error_message=result.error_message,
            processed_at=rt.clock.now(),
            event_type=hooks.event_type,
        ),
    )
    if status is not None:  # None: another run of the job settled it first
        metrics.settled(kind, metrics.Outcome(status.lower()))


async def _ask_the_bank(rt: Runtime, row: Transaction, hooks: SettlementHooks) -> PaymentResult:
    now = rt.clock.now()
    failure = hooks.expiry_failure(row, now)
    if failure is not None:
        code, message = failure
        assert row.end_to_end_id is not None, "a payout that can expire has its end-to-end id"
        return PaymentResult(
            status="ERROR",
            end_to_end_id=row.end_to_end_id,
            counterpart=None,
            error_code=code,
            error_message=message,
        )
    if hooks.send is not None:
        return await hooks.send(rt.provider, row, now)
    return await rt.provider.pay(hooks.payment_order(row, now))


def _payment_order(row: Transaction, now: datetime) -> PaymentOrder:
    """What the settling bank is asked to pay, from a PENDING row of most kinds."""
    details: dict[str, Any] = row.details
    assert row.pix_key is not None and row.pix_key_type is not None, "a payout has its key"
    return PaymentOrder(
        transaction_pk=row.id,
        amount=row.amount,
        pix_key=row.pix_key,
        key_type=row.pix_key_type,
        document=details.get("document"),
        check_document=bool(details.get("checkPixKeyWithDocument")),
        at=now,
        name=details.get("name"),
    )


def _never_expires(row: Transaction, now: datetime) -> tuple[str, str] | None:
    return None


@dataclass(frozen=True, slots=True)
class SettlementHooks:
    """What differs between kinds of payout at settlement: the order sent to the bank, and
    whether a payout still queued has expired (then it ends in ERROR without the bank)."""

    payment_order: Callable[[Transaction, datetime], PaymentOrder] = _payment_order
    expiry_failure: Callable[[Transaction, datetime], tuple[str, str] | None] = _never_expires
    send: Callable[[SettlingBank, Transaction, datetime], Awaitable[PaymentResult]] | None = None
    """How the bank is asked, when it is not `pay(payment_order(...))` (a refund's return)."""
    event_type: EventType = EventType.CASH_OUT
    """The event the settlement writes."""
    in_house: Callable[[Runtime, Transaction], Awaitable[bool]] | None = None
    """Tried before the bank: settles the payout without it when its money never leaves the
    house (True: nothing left for the bank; False: ask the bank)."""


DEFAULT_HOOKS = SettlementHooks()
REFUND_HOOKS = SettlementHooks(
    send=refunds.send_return, event_type=EventType.REFUND_IN, in_house=refunds.settle_in_house
)
PayoutKind = TransactionKind | RefundKind
"""What `transactions.kind` holds: the use case that wrote the row, or the refund's door."""

HOOKS: dict[PayoutKind, SettlementHooks] = {
    TransactionKind.DICT_TRANSFER: SettlementHooks(
        payment_order=dict_transfer.payment_order, expiry_failure=dict_transfer.expiry_failure
    ),
    **dict.fromkeys(RETURN_KINDS, REFUND_HOOKS),
}
"""The kinds of payout that settle otherwise than `DEFAULT_HOOKS` says."""

_KINDS: dict[str, PayoutKind] = {kind.value: kind for kind in (*TransactionKind, *RefundKind)}


def hooks_for(kind: str) -> SettlementHooks:
    """The hooks of a row's kind. The column is text, an open set: a kind this version does
    not name settles by `DEFAULT_HOOKS`."""
    known = _KINDS.get(kind)
    return DEFAULT_HOOKS if known is None else HOOKS.get(known, DEFAULT_HOOKS)
