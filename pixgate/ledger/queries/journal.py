"""Double-entry journal: the Python callers of the ledger's balance moves.

Each move is a database function of `pixgate/ledger/sql/010_ledger.sql`, where its rule is
written once: the balance UPDATE and its balanced journal entry, in the caller's
transaction. The payout functions (`040_payouts.sql`) call the same functions, so a cash-out
settled by the hot path and a split payout held here move money by one rule.
"""

from __future__ import annotations

from pixgate.core.db.pool import Connection


async def fund(conn: Connection, account_id: int, amount: int, *, memo: str) -> None:
    """Sandbox money from nowhere, kept honest by the `sandbox_funding` book."""
    await conn.execute("SELECT ledger_fund($1, $2, $3)", account_id, amount, memo)


async def credit(
    conn: Connection, account_id: int, amount: int, fee: int, *, transaction_id: int
) -> None:
    """Money received: the account gets amount - fee, we keep the fee."""
    await conn.execute(
        "SELECT ledger_credit($1, $2, $3, $4)", account_id, amount, fee, transaction_id
    )
