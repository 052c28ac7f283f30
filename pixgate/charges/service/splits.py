"""Split recipients of a paid charge: each gets its share as a PIX out.

When the charge is paid, each split's share of the GROSS amount is computed once with
`allocate_splits` (PERCENTAGE: percent of gross; FIXED: the stated amount; no cent made or
lost) and stored on the split. A share is paid out as a WITHDRAW of kind `split_payout`
(`parent_id` = the PIX-IN), debited from the receiving account, with no fee of its own
(the cash-in fee already paid for the money), and settled like any outgoing payment by
`payouts.settle`.

When: `immediate` splits, and every split of an account whose `split_frequency` is
`immediate`, in the transaction of the payment itself; the others at the account's next
hourly or daily boundary (Brasília time), by one `splits.run_due` job per account and
boundary (`split_runs` makes the enqueue idempotent).

Reconciliation of one paid charge of gross G with cash-in fee F and shares S1..Sn:
the account is credited G - F, the payouts debit S1 + ... + Sn, and what stays is
R = G - F - sum(S); so G = F + sum(S) + R to the cent.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from pixgate.accounts.public import accounts_queries as account_rows
from pixgate.charges.queries import charge_splits as split_rows
from pixgate.charges.queries.charge_splits import Split
from pixgate.charges.queries.charges import Charge
from pixgate.core.db.pool import Connection
from pixgate.core.errors import InsufficientBalance
from pixgate.core.labels import SplitFrequency, TransactionKind
from pixgate.core.money import allocate_splits
from pixgate.core.pix.keys import normalize_key
from pixgate.core.settings import Settings
from pixgate.jobs.public import queue as jobs
from pixgate.ledger.public import Transaction
from pixgate.payouts.public import AcceptMode, outgoing, payments
from pixgate.runtime import Runtime
from pixgate.webhooks.public import EventType
from pixgate.webhooks.public import outbox as events

KIND = TransactionKind.SPLIT_PAYOUT


def next_run(frequency: SplitFrequency, now: datetime, timezone: str) -> datetime | None:
    """When deferred splits of an account are paid: None for `immediate`, else the start
    of the next local hour or day."""
    local = now.astimezone(ZoneInfo(timezone))
    if frequency == SplitFrequency.HOURLY:
        start = local.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    elif frequency == SplitFrequency.DAILY:
        start = local.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    else:
        return None
    return start.astimezone(UTC)


async def on_payment(
    conn: Connection,
    settings: Settings,
    *,
    charge: Charge,
    payment: Transaction,
    now: datetime,
) -> None:
    """Compute and schedule the splits of a charge just paid, in the payment's transaction."""
    rows = await split_rows.splits_of(conn, charge.id)
    if not rows:
        return
    account_id: int = charge.account_id
    shares = allocate_splits(
        payment.amount,
        [(r.split_type, Decimal(r.value)) for r in rows],
    )
    frequency = await account_rows.split_frequency_of(conn, account_id)
    later = next_run(frequency, now, settings.timezone)
    due: list[datetime | None] = [
        None if share == 0 else (now if row.immediate or later is None else later)
        for row, share in zip(rows, shares, strict=True)
    ]
    await split_rows.schedule_splits(conn, [r.id for r in rows], shares, due)
    for row, share, due_at in zip(rows, shares, due, strict=True):
        if due_at == now:
            await _pay_out(
                conn,
                settings,
                row,
                share,
                account_id=account_id,
                parent_id=payment.id,
                txid=charge.txid,
                now=now,
            )
    if (
        later is not None
        and later in due
        and await split_rows.claim_split_run(conn, account_id, later)
    ):
        await jobs.enqueue(
            conn,
            jobs.RUN_DUE_SPLITS,
            jobs.RunDueSplits(account_id, later.isoformat()),
            run_at=later,
        )


async def run_due(rt: Runtime, account_id: int, due_by: datetime) -> int:
    """Pay out every split of the account due by `due_by`; returns how many.

    Idempotent: a paid split has its `payout_id`, and concurrent runs skip locked rows.
    """
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        rows = await split_rows.due_splits(conn, account_id, due_by)
        for due in rows:
            assert due.split.amount is not None, "a due split has its share"
            await _pay_out(
                conn,
                rt.settings,
                due.split,
                due.split.amount,
                account_id=account_id,
                parent_id=due.parent_id,
                txid=due.txid,
                now=now,
            )
    return len(rows)


async def _pay_out(
    conn: Connection,
    settings: Settings,
    split: Split,
    amount: int,
    *,
    account_id: int,
    parent_id: int,
    txid: str,
    now: datetime,
) -> None:
    """A PENDING payout with its hold and settlement job, or, when the account cannot
    cover it any more (its fee grew, or the money left since), an ERROR payout that moved
    nothing: a payment received is never refused because of its splits."""
    details: dict[str, Any] = {
        "name": split.name,
        "document": split.document,
        "splitType": split.split_type,
        "chargeTxid": txid,
    }
    payout = await payments.insert_pending(
        conn,
        account_id=account_id,
        kind=KIND,
        external_id=None,
        amount=amount,
        fee=0,
        pix_key=normalize_key(split.pix_key, split.pix_key_type),
        pix_key_type=split.pix_key_type,
        description=f"split {split.position + 1} of charge {txid}",
        details=details,
        created_at=now,
        parent_id=parent_id,
    )
    assert payout is not None  # no externalId, so no conflict
    await split_rows.link_payout(conn, split.id, payout.id)
    held = await outgoing.accept(
        conn, settings, AcceptMode.COUNTED, account_id, payout.id, amount=amount, fee=0, now=now
    )
    if not held:
        await split_rows.fail_unsent(
            conn,
            payout.id,
            error_code=InsufficientBalance.code,
            error_message="available balance is less than amount + fee",
            at=now,
        )
        await events.record(
            conn, account_id=account_id, type=EventType.CASH_OUT, transaction_id=payout.id
        )
