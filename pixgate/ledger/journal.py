"""Double-entry journal: each movement is one entry whose postings sum to zero.

A customer account has two books, `available` and `blocked`; the cached balances on
`accounts` move in the same statement sequence as the postings, inside the caller's
transaction. System books (`settlement`: the world outside, through the settling bank;
`fees`: our revenue; `sandbox_funding`: seeded sandbox money) have no account.

The cash-out's hold and the settlement's post or void, the two busiest movements, are made
by the `hold_payout()` and `settle_payout()` database functions (migrations 0007 and 0008),
one round trip each, with the same postings as `hold` and `post_hold` here and a void
that returns `blocked` to `available`; `ledger.verify` checks their entries like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

from pixgate.db.pool import Connection
from pixgate.domain.errors import InsufficientBalance


@dataclass(frozen=True, slots=True)
class Posting:
    account_id: int | None
    book: str
    amount: int


async def record(
    conn: Connection, postings: list[Posting], *, memo: str, transaction_id: int | None = None
) -> None:
    """Write one balanced entry whose balances the caller has already moved."""
    await _move(conn, None, (), postings, memo=memo, transaction_id=transaction_id)


async def fund(conn: Connection, account_id: int, amount: int, *, memo: str) -> None:
    """Sandbox money from nowhere, kept honest by the `sandbox_funding` book."""
    await _move(
        conn,
        "UPDATE accounts SET available = available + $2 WHERE id = $1",
        (account_id, amount),
        [Posting(account_id, "available", amount), Posting(None, "sandbox_funding", -amount)],
        memo=memo,
    )


async def hold(conn: Connection, account_id: int, amount: int, *, transaction_id: int) -> None:
    """Move `amount` from available to blocked, or raise InsufficientBalance.

    One guarded UPDATE: concurrent holds serialise on the row and none can overdraw. It
    locks the account row until COMMIT, so callers do it as late as they can.
    """
    moved = await _move(
        conn,
        "UPDATE accounts SET available = available - $2, blocked = blocked + $2 "
        "WHERE id = $1 AND available >= $2",
        (account_id, amount),
        [Posting(account_id, "available", -amount), Posting(account_id, "blocked", amount)],
        memo="hold",
        transaction_id=transaction_id,
    )
    if not moved:
        raise InsufficientBalance("available balance is less than amount + fee")


async def post_hold(
    conn: Connection,
    account_id: int,
    amount: int,
    fee: int,
    *,
    transaction_id: int,
    counter_book: str = "settlement",
) -> None:
    """A held outgoing payment leaves: amount to the settling bank, fee to our revenue."""
    moved = await _move(
        conn,
        "UPDATE accounts SET blocked = blocked - $2 WHERE id = $1 AND blocked >= $2",
        (account_id, amount + fee),
        [
            Posting(account_id, "blocked", -(amount + fee)),
            Posting(None, counter_book, amount),
            Posting(None, "fees", fee),
        ],
        memo="post",
        transaction_id=transaction_id,
    )
    if not moved:
        raise RuntimeError(f"blocked balance of account {account_id} is below {amount + fee}")


async def credit(
    conn: Connection, account_id: int, amount: int, fee: int, *, transaction_id: int
) -> None:
    """Money received: the account gets amount - fee, we keep the fee."""
    await _move(
        conn,
        "UPDATE accounts SET available = available + $2 WHERE id = $1",
        (account_id, amount - fee),
        [
            Posting(None, "settlement", -amount),
            Posting(account_id, "available", amount - fee),
            Posting(None, "fees", fee),
        ],
        memo="credit",
        transaction_id=transaction_id,
    )


async def _move(
    conn: Connection,
    update: str | None,
    update_args: tuple[object, ...],
    postings: list[Posting],
    *,
    memo: str,
    transaction_id: int | None = None,
) -> bool:
    """The balance UPDATE and its journal entry in ONE statement (one round trip).

    The entry is written only when the guarded UPDATE moved the row; returns whether it did.
    """
    if sum(p.amount for p in postings) != 0:
        raise ValueError(f"unbalanced journal entry: {postings}")
    n = len(update_args)
    moved = f"({update} RETURNING 1)" if update else "(SELECT 1)"
    done: bool = await conn.fetchval(
        f"""
        WITH moved AS {moved},
        entry AS (SELECT nextval('ledger_entry_seq') AS id FROM moved),
        lines AS (
            INSERT INTO ledger_postings (entry_id, account_id, book, amount, transaction_id, memo)
            SELECT entry.id, l.account_id, l.book, l.amount, ${n + 4}, ${n + 5}
            FROM entry,
                 unnest(${n + 1}::bigint[], ${n + 2}::text[], ${n + 3}::bigint[])
                     AS l(account_id, book, amount)
            RETURNING 1
        )
        SELECT EXISTS (SELECT 1 FROM moved)
        """,  # noqa: S608 - the UPDATE is one of this module's constants
        *update_args,
        [p.account_id for p in postings],
        [p.book for p in postings],
        [p.amount for p in postings],
        transaction_id,
        memo,
    )
    return done
