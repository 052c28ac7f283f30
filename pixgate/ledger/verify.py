"""Ledger invariants, checked by `pixgate ledger verify` and after tests."""

from __future__ import annotations

from pixgate.db.pool import Connection


async def problems(conn: Connection) -> list[str]:
    """Every way the books can be wrong; an empty list means they balance."""
    found: list[str] = []
    for row in await conn.fetch(
        "SELECT entry_id, sum(amount) AS total FROM ledger_postings "
        "GROUP BY entry_id HAVING sum(amount) <> 0"
    ):
        found.append(f"entry {row['entry_id']} does not balance (sum {row['total']})")
    for row in await conn.fetch(
        """
        SELECT a.id, a.available, a.blocked,
               coalesce(sum(p.amount) FILTER (WHERE p.book = 'available'), 0) AS j_available,
               coalesce(sum(p.amount) FILTER (WHERE p.book = 'blocked'), 0) AS j_blocked
        FROM accounts a LEFT JOIN ledger_postings p ON p.account_id = a.id
        GROUP BY a.id
        HAVING a.available <> coalesce(sum(p.amount) FILTER (WHERE p.book = 'available'), 0)
            OR a.blocked <> coalesce(sum(p.amount) FILTER (WHERE p.book = 'blocked'), 0)
            OR a.available < 0 OR a.blocked < 0
        """
    ):
        found.append(
            f"account {row['id']}: available {row['available']} (journal {row['j_available']}), "
            f"blocked {row['blocked']} (journal {row['j_blocked']})"
        )
    return found
