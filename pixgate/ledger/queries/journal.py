"""Double-entry journal: the Python callers of the ledger's balance moves.

Each move is a database function of `pixgate/ledger/sql/010_ledger.sql`, where its rule is
written once: the balance UPDATE and its balanced journal entry, in the caller's
transaction. The payout functions (`040_payouts.sql`) call the same functions, so a cash-out
settled by the hot path and a split payout held here move money by one rule.
"""

from __future__ import annotations

from pixgate.core.db.pool import Connection
from pixgate.core.errors import InsufficientBalance


async def fund(conn: Connection, account_id: int, amount: int, *, memo: str) -> None:
    """Sandbox money from nowhere, kept honest by the `sandbox_funding` book."""
    await conn.execute("SELECT ledger_fund($1, $2, $3)", account_id, amount, memo)


async def hold(conn: Connection, account_id: int, amount: int, *, transaction_id: int) -> None:
    """Move `amount` from available to blocked, or raise InsufficientBalance.

    It locks the account row until COMMIT, so callers do it as late as they can.
    """
    held: bool = await conn.fetchval(
        "SELECT (ledger_hold($1, $2, $3)).id IS NOT NULL", account_id, amount, transaction_id
    )
    if not held:
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
    """A held outgoing payment leaves: amount to `counter_book`, fee to our revenue."""
    await conn.execute(
        "SELECT ledger_post($1, $2, $3, $4, $5)",
        account_id,
        amount,
        fee,
        transaction_id,
        counter_book,
    )


async def credit(
    conn: Connection, account_id: int, amount: int, fee: int, *, transaction_id: int
) -> None:
    """Money received: the account gets amount - fee, we keep the fee."""
    await conn.execute(
        "SELECT ledger_credit($1, $2, $3, $4)", account_id, amount, fee, transaction_id
    )
