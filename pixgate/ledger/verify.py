"""Ledger invariants, checked by `pixgate ledger verify` and after tests.

Every cached figure must equal what it caches: balances their journal, and the limits'
outgoing volume the amounts of the outgoing payments not in ERROR.
"""

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
    for row in await conn.fetch(
        """
        WITH sent AS (
            SELECT account_id,
                   limit_bucket(created_at) AS bucket,
                   sum(amount) AS used
            FROM transactions
            WHERE operation = 'WITHDRAW' AND status <> 'ERROR'
            GROUP BY 1, 2
        )
        SELECT account_id, bucket, coalesce(s.used, 0) AS sent, coalesce(u.used, 0) AS counted
        FROM sent s FULL JOIN limit_usage u USING (account_id, bucket)
        WHERE coalesce(s.used, 0) <> coalesce(u.used, 0)
        """
    ):
        found.append(
            f"account {row['account_id']}: limit usage at {row['bucket']} counts "
            f"{row['counted']}, payments sent {row['sent']}"
        )
    return found
