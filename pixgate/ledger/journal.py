"""Double-entry journal: each movement is one entry whose postings sum to zero.

A customer account has two books, `available` and `blocked`; the cached balances on
`accounts` move in the same statement sequence as the postings, inside the caller's
transaction. System books (`settlement`: the world outside, through the settling bank;
`fees`: our revenue; `sandbox_funding`: seeded sandbox money) have no account.
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
) -> int:
    """Write one balanced entry; returns its id. Balances are moved by the callers below."""
    if sum(p.amount for p in postings) != 0:
        raise ValueError(f"unbalanced journal entry: {postings}")
    entry_id: int = await conn.fetchval(
        """
        WITH entry AS (SELECT nextval('ledger_entry_seq') AS id),
        lines AS (
            INSERT INTO ledger_postings (entry_id, account_id, book, amount, transaction_id, memo)
            SELECT entry.id, l.account_id, l.book, l.amount, $4, $5
            FROM entry,
                 unnest($1::bigint[], $2::text[], $3::bigint[]) AS l(account_id, book, amount)
            RETURNING entry_id
        )
        SELECT id FROM entry
        """,
        [p.account_id for p in postings],
        [p.book for p in postings],
        [p.amount for p in postings],
        transaction_id,
        memo,
    )
    return entry_id


async def fund(conn: Connection, account_id: int, amount: int, *, memo: str) -> None:
    """Sandbox money from nowhere, kept honest by the `sandbox_funding` book."""
    await conn.execute(
        "UPDATE accounts SET available = available + $2 WHERE id = $1", account_id, amount
    )
    await record(
        conn,
        [Posting(account_id, "available", amount), Posting(None, "sandbox_funding", -amount)],
        memo=memo,
    )


async def hold(conn: Connection, account_id: int, amount: int, *, transaction_id: int) -> None:
    """Move `amount` from available to blocked, or raise InsufficientBalance.

    One guarded UPDATE: concurrent holds serialise on the row and none can overdraw.
    """
    status = await conn.execute(
        "UPDATE accounts SET available = available - $2, blocked = blocked + $2 "
        "WHERE id = $1 AND available >= $2",
        account_id,
        amount,
    )
    if status != "UPDATE 1":
        raise InsufficientBalance("available balance is less than amount + fee")
    await record(
        conn,
        [Posting(account_id, "available", -amount), Posting(account_id, "blocked", amount)],
        memo="hold",
        transaction_id=transaction_id,
    )


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
    await _move_out_of_blocked(conn, account_id, amount + fee)
    await record(
        conn,
        [
            Posting(account_id, "blocked", -(amount + fee)),
            Posting(None, counter_book, amount),
            Posting(None, "fees", fee),
        ],
        memo="post",
        transaction_id=transaction_id,
    )


async def void_hold(conn: Connection, account_id: int, amount: int, *, transaction_id: int) -> None:
    """A failed outgoing payment: the held funds return to available."""
    await _move_out_of_blocked(conn, account_id, amount, to_available=True)
    await record(
        conn,
        [Posting(account_id, "blocked", -amount), Posting(account_id, "available", amount)],
        memo="void",
        transaction_id=transaction_id,
    )


async def credit(
    conn: Connection, account_id: int, amount: int, fee: int, *, transaction_id: int
) -> None:
    """Money received: the account gets amount - fee, we keep the fee."""
    await conn.execute(
        "UPDATE accounts SET available = available + $2 WHERE id = $1", account_id, amount - fee
    )
    await record(
        conn,
        [
            Posting(None, "settlement", -amount),
            Posting(account_id, "available", amount - fee),
            Posting(None, "fees", fee),
        ],
        memo="credit",
        transaction_id=transaction_id,
    )


async def _move_out_of_blocked(
    conn: Connection, account_id: int, amount: int, *, to_available: bool = False
) -> None:
    status = await conn.execute(
        "UPDATE accounts SET blocked = blocked - $2, "
        "available = available + CASE WHEN $3 THEN $2 ELSE 0 END "
        "WHERE id = $1 AND blocked >= $2",
        account_id,
        amount,
        to_available,
    )
    if status != "UPDATE 1":
        raise RuntimeError(f"blocked balance of account {account_id} is below {amount}")
