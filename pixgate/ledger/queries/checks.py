"""The ledger's invariant queries (`pixgate.ledger.service.verify` words them): each returns the
rows that break one invariant, so an empty list means it holds. Sums are cast to bigint
(cents): PostgreSQL's `sum` of a bigint is a numeric."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pixgate.core.db.pool import Connection


@dataclass(frozen=True, slots=True)
class UnbalancedEntry:
    """A journal entry whose postings do not sum to zero."""

    entry_id: int
    total: int


@dataclass(frozen=True, slots=True)
class BalanceMismatch:
    """An account whose cached books differ from its journal, or are negative."""

    account_id: int
    available: int
    blocked: int
    journal_available: int
    journal_blocked: int


@dataclass(frozen=True, slots=True)
class UsageMismatch:
    """A limit bucket whose counted usage differs from the outgoing payments not in ERROR."""

    account_id: int
    bucket: datetime
    sent: int
    counted: int


@dataclass(frozen=True, slots=True)
class DanglingReference:
    """Rows whose `reference` (`table.column`) names a `target` row that does not exist."""

    reference: str
    target: str
    value: int
    rows: int


DANGLING_REFERENCES = """
WITH refs (reference, target, value) AS (
    SELECT 'ledger_postings.account_id', 'accounts', account_id FROM ledger_postings
    UNION ALL SELECT 'ledger_postings.transaction_id', 'transactions', transaction_id
              FROM ledger_postings
    UNION ALL SELECT 'events.account_id', 'accounts', account_id FROM events
    UNION ALL SELECT 'events.transaction_id', 'transactions', transaction_id FROM events
    UNION ALL SELECT 'transactions.account_id', 'accounts', account_id FROM transactions
    UNION ALL SELECT 'limit_usage.account_id', 'accounts', account_id FROM limit_usage
)
SELECT r.reference, r.target, r.value, count(*) AS n
FROM refs r
LEFT JOIN accounts a ON r.target = 'accounts' AND a.id = r.value
LEFT JOIN transactions t ON r.target = 'transactions' AND t.id = r.value
WHERE r.value IS NOT NULL AND a.id IS NULL AND t.id IS NULL
GROUP BY 1, 2, 3
ORDER BY 1, 3
"""
"""The references every payment writes, which no foreign key checks: the SQL functions that
write them have just locked or written the row they name (`0020_hot_path_references.py`
says why)."""


async def dangling_references(conn: Connection) -> list[DanglingReference]:
    rows = await conn.fetch(DANGLING_REFERENCES)
    return [DanglingReference(r["reference"], r["target"], r["value"], r["n"]) for r in rows]


async def unbalanced_entries(conn: Connection) -> list[UnbalancedEntry]:
    rows = await conn.fetch(
        "SELECT entry_id, sum(amount)::bigint AS total FROM ledger_postings "
        "GROUP BY entry_id HAVING sum(amount) <> 0"
    )
    return [UnbalancedEntry(r["entry_id"], r["total"]) for r in rows]


async def balance_mismatches(conn: Connection) -> list[BalanceMismatch]:
    rows = await conn.fetch(
        """
        SELECT a.id, a.available, a.blocked,
               coalesce(sum(p.amount) FILTER (WHERE p.book = 'available'), 0)::bigint
                   AS j_available,
               coalesce(sum(p.amount) FILTER (WHERE p.book = 'blocked'), 0)::bigint AS j_blocked
        FROM accounts a LEFT JOIN ledger_postings p ON p.account_id = a.id
        GROUP BY a.id
        HAVING a.available <> coalesce(sum(p.amount) FILTER (WHERE p.book = 'available'), 0)
            OR a.blocked <> coalesce(sum(p.amount) FILTER (WHERE p.book = 'blocked'), 0)
            OR a.available < 0 OR a.blocked < 0
        """
    )
    return [
        BalanceMismatch(r["id"], r["available"], r["blocked"], r["j_available"], r["j_blocked"])
        for r in rows
    ]


async def usage_mismatches(conn: Connection) -> list[UsageMismatch]:
    rows = await conn.fetch(
        """
        WITH sent AS (
            SELECT account_id,
                   limit_bucket(created_at) AS bucket,
                   sum(amount) AS used
            FROM transactions
            WHERE operation = 'WITHDRAW' AND status <> 'ERROR'
            GROUP BY 1, 2
        )
        SELECT account_id, bucket, coalesce(s.used, 0)::bigint AS sent,
               coalesce(u.used, 0)::bigint AS counted
        FROM sent s FULL JOIN limit_usage u USING (account_id, bucket)
        WHERE coalesce(s.used, 0) <> coalesce(u.used, 0)
        """
    )
    return [UsageMismatch(r["account_id"], r["bucket"], r["sent"], r["counted"]) for r in rows]
