"""Ledger invariants, checked by `pixgate ledger verify` and after tests.

Every cached figure must equal what it caches: balances their journal, and the limits'
outgoing volume the amounts of the outgoing payments not in ERROR; and every account or
transaction that a posting, an event, a payment or a limit count names must exist.
"""

from __future__ import annotations

from pixgate.core.db.pool import Connection
from pixgate.ledger.queries import checks as ledger_checks


async def problems(conn: Connection) -> list[str]:
    """Every way the books can be wrong; an empty list means they balance."""
    found = [
        f"entry {e.entry_id} does not balance (sum {e.total})"
        for e in await ledger_checks.unbalanced_entries(conn)
    ]
    found.extend(
        f"account {m.account_id}: available {m.available} (journal {m.journal_available}), "
        f"blocked {m.blocked} (journal {m.journal_blocked})"
        for m in await ledger_checks.balance_mismatches(conn)
    )
    found.extend(
        f"account {u.account_id}: limit usage at {u.bucket} counts "
        f"{u.counted}, payments sent {u.sent}"
        for u in await ledger_checks.usage_mismatches(conn)
    )
    found.extend(
        f"{d.reference} names {d.target} {d.value}, which does not exist "
        f"({d.rows} row{'s' if d.rows > 1 else ''})"
        for d in await ledger_checks.dangling_references(conn)
    )
    return found
