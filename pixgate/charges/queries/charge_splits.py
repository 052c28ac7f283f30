"""A paid charge's split recipients: their shares, when they are paid out, and the payouts
that pay them (`charges.service.splits`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from pixgate.charges.queries.charges import SplitRow
from pixgate.core.db.pool import Connection


@dataclass(frozen=True, slots=True)
class Split(SplitRow):
    """A `charge_splits` row: the recipient, its share once the charge is paid (`amount`),
    when it is paid out (`due_at`) and the WITHDRAW that pays it (`payout_id`)."""

    id: int
    charge_id: int
    position: int
    amount: int | None
    payout_id: int | None
    due_at: datetime | None

    @classmethod
    def from_record(cls, r: asyncpg.Record | dict[str, Any]) -> Split:
        return cls(**r)


@dataclass(frozen=True, slots=True)
class DueSplit:
    """A split due for payout, with its charge's PAYMENT transaction (`parent_id`) and txid."""

    split: Split
    parent_id: int
    txid: str


async def splits_of(conn: Connection, charge_id: int) -> list[Split]:
    rows = await conn.fetch(
        "SELECT * FROM charge_splits WHERE charge_id = $1 ORDER BY position", charge_id
    )
    return [Split.from_record(r) for r in rows]


async def schedule_splits(
    conn: Connection, split_ids: list[int], amounts: list[int], due_at: list[datetime | None]
) -> None:
    """Record each split's share of the payment and when it is paid out (None: never, 0 cents)."""
    await conn.execute(
        """
        UPDATE charge_splits s SET amount = u.amount, due_at = u.due_at
        FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[]) AS u(id, amount, due_at)
        WHERE s.id = u.id
        """,
        split_ids,
        amounts,
        due_at,
    )


async def claim_split_run(conn: Connection, account_id: int, run_at: datetime) -> bool:
    """True for the one transaction that schedules this account's run at `run_at`."""
    status = await conn.execute(
        "INSERT INTO split_runs (account_id, run_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        account_id,
        run_at,
    )
    return status == "INSERT 0 1"


async def due_splits(conn: Connection, account_id: int, due_by: datetime) -> list[DueSplit]:
    """The account's unpaid splits due by `due_by`, locked (a concurrent run skips them),
    with the PAYMENT transaction they come from as `parent_id`."""
    rows = await conn.fetch(
        """
        SELECT s.*, c.transaction_id AS parent_id, c.txid
        FROM charge_splits s JOIN charges c ON c.id = s.charge_id
        WHERE c.account_id = $1 AND s.payout_id IS NULL AND s.due_at <= $2
        ORDER BY s.due_at, s.id
        FOR UPDATE OF s SKIP LOCKED
        """,
        account_id,
        due_by,
    )
    due = []
    for r in rows:
        values = dict(r)
        parent_id, txid = values.pop("parent_id"), values.pop("txid")
        due.append(DueSplit(Split.from_record(values), parent_id, txid))
    return due


async def link_payout(conn: Connection, split_id: int, payout_id: int) -> None:
    await conn.execute(
        "UPDATE charge_splits SET payout_id = $2 WHERE id = $1 AND payout_id IS NULL",
        split_id,
        payout_id,
    )


async def fail_unsent(
    conn: Connection, transaction_id: int, *, error_code: str, error_message: str, at: datetime
) -> None:
    """A PENDING payout that never left (nothing held): ERROR, as the settlement would say."""
    await conn.execute(
        """
        UPDATE transactions SET status = 'ERROR', error_code = $2, error_message = $3,
                                processed_at = $4
        WHERE id = $1 AND status = 'PENDING'
        """,
        transaction_id,
        error_code,
        error_message,
        at,
    )
