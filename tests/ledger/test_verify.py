"""pixgate.ledger.service.verify.problems: silent on healthy books, and each invariant it claims to
check caught when broken by hand. Every break is made in a transaction that is rolled back,
so the books are healthy again for the next test (and for the check after this one)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal

import pytest

from pixgate.charges.service import charges
from pixgate.core.db.pool import Connection
from pixgate.ledger.service import verify
from pixgate.payouts.service import cash_out
from pixgate.payouts.service import settlement as payouts
from pixgate.provider.base import Instructions
from pixgate.runtime import Runtime
from tests.charges.test_charges_service import PAYER
from tests.helpers import make_account
from tests.payouts.test_cash_out_service import order

AVAILABLE, BLOCKED = 10000 - 1000 - 500 + 2000, 500
"""The books `healthy` leaves: 100.00 funded, 10.00 sent, 5.00 held, 20.00 received."""


async def healthy(rt: Runtime) -> int:
    """An account whose books saw every move: funded, a cash-out posted, one still held, one
    voided, a PIX received. Its id."""
    account_id = (await make_account(rt, balance="100.00")).account_id
    for value, scenario in (("10.00", None), ("7.00", "ORDER_REJECTED")):
        made = await cash_out.create(
            rt, account_id, order(value), instructions=Instructions(scenario)
        )
        async with rt.db.connection() as conn:
            row_id = await conn.fetchval(
                "SELECT id FROM transactions WHERE transaction_id = $1", made.transaction_id
            )
        await payouts.settle(rt, row_id)
    await cash_out.create(rt, account_id, order("5.00"))
    await charges.sandbox_incoming(rt, account_id, Decimal("20.00"), PAYER)
    return account_id


@asynccontextmanager
async def rolled_back(rt: Runtime) -> AsyncIterator[Connection]:
    """A connection in a transaction that is always rolled back: damage made here is undone."""
    async with rt.db.connection() as conn:
        transaction = conn.transaction()
        await transaction.start()
        try:
            yield conn
        finally:
            await transaction.rollback()


async def test_healthy_books_have_no_problems(rt: Runtime) -> None:
    account_id = await healthy(rt)
    async with rt.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT available, blocked FROM accounts WHERE id = $1", account_id
        )
        assert row is not None
        assert (row["available"], row["blocked"]) == (AVAILABLE, BLOCKED)
        assert await conn.fetchval("SELECT count(DISTINCT entry_id) FROM ledger_postings") == 7
        assert await verify.problems(conn) == []


SYSTEM_POSTING = "(SELECT max(id) FROM ledger_postings WHERE book = 'settlement')"
"""The settling bank's side of the last entry that has one (the PIX received)."""

BROKEN = {
    "cached available above its journal": (
        ["UPDATE accounts SET available = available + 1 WHERE id = $1"],
        [
            rf"account {{id}}: available {AVAILABLE + 1} \(journal {AVAILABLE}\), "
            rf"blocked {BLOCKED} \(journal {BLOCKED}\)",
        ],
    ),
    "cached blocked below its journal": (
        ["UPDATE accounts SET blocked = blocked - 1 WHERE id = $1"],
        [
            rf"account {{id}}: available {AVAILABLE} \(journal {AVAILABLE}\), "
            rf"blocked {BLOCKED - 1} \(journal {BLOCKED}\)",
        ],
    ),
    "a posting of the account missing from its journal": (
        [
            "DELETE FROM ledger_postings WHERE id = (SELECT max(id) FROM ledger_postings "
            "WHERE account_id = $1 AND book = 'available')"
        ],
        [
            r"entry \d+ does not balance \(sum -2000\)",
            rf"account {{id}}: available {AVAILABLE} \(journal {AVAILABLE - 2000}\)",
        ],
    ),
    "a posting changed: its entry no longer sums to zero": (
        [f"UPDATE ledger_postings SET amount = amount + 5 WHERE id = {SYSTEM_POSTING}"],
        [r"entry \d+ does not balance \(sum 5\)"],
    ),
    "a posting deleted: its entry no longer sums to zero": (
        [f"DELETE FROM ledger_postings WHERE id = {SYSTEM_POSTING}"],
        [r"entry \d+ does not balance \(sum 2000\)"],
    ),
    "a lone posting: an entry of one leg": (
        [
            "INSERT INTO ledger_postings (entry_id, account_id, book, amount, memo) "
            "VALUES (nextval('ledger_entry_seq'), NULL, 'fees', 7, 'stray')"
        ],
        [r"entry \d+ does not balance \(sum 7\)"],
    ),
    "a negative available balance that its journal agrees with": (
        [
            "ALTER TABLE accounts DROP CONSTRAINT ck_accounts_available_not_negative",
            "SELECT ledger_fund($1, -20000, 'overdraft')",
        ],
        [rf"account {{id}}: available {AVAILABLE - 20000} \(journal {AVAILABLE - 20000}\)"],
    ),
    "a negative blocked balance that its journal agrees with": (
        [
            "ALTER TABLE accounts DROP CONSTRAINT ck_accounts_blocked_not_negative",
            "UPDATE accounts SET blocked = blocked - 1000, available = available + 1000 "
            "WHERE id = $1",
            "WITH e AS (SELECT nextval('ledger_entry_seq') AS id) "
            "INSERT INTO ledger_postings (entry_id, account_id, book, amount, memo) "
            "SELECT e.id, $1, v.b, v.a, 'overdrawn' FROM e, "
            "(VALUES ('blocked', -1000), ('available', 1000)) AS v(b, a)",
        ],
        [
            rf"account {{id}}: available {AVAILABLE + 1000} \(journal {AVAILABLE + 1000}\), "
            rf"blocked {BLOCKED - 1000} \(journal {BLOCKED - 1000}\)",
        ],
    ),
    "the limits count more than was sent": (
        ["UPDATE limit_usage SET used = used + 1 WHERE account_id = $1"],
        [r"account {id}: limit usage at .+ counts 1501, payments sent 1500"],
    ),
    "a payout sent that the limits never counted": (
        ["DELETE FROM limit_usage WHERE account_id = $1"],
        [r"account {id}: limit usage at .+ counts 0, payments sent 1500"],
    ),
    "a failed payout still counted": (
        [
            "UPDATE transactions SET status = 'ERROR' WHERE account_id = $1 "
            "AND operation = 'WITHDRAW' AND amount = 500"
        ],
        [r"account {id}: limit usage at .+ counts 1500, payments sent 1000"],
    ),
    "a posting of an account that does not exist": (
        [
            "WITH e AS (SELECT nextval('ledger_entry_seq') AS id) "
            "INSERT INTO ledger_postings (entry_id, account_id, book, amount, memo) "
            "SELECT e.id, v.account, v.b, v.a, 'stray' FROM e, "
            "(VALUES (999999, 'available', 300), (NULL, 'fees', -300)) AS v(account, b, a)"
        ],
        [r"ledger_postings\.account_id names accounts 999999, which does not exist \(1 row\)"],
    ),
    "a posting of a transaction that does not exist": (
        [f"UPDATE ledger_postings SET transaction_id = 999998 WHERE id = {SYSTEM_POSTING}"],
        [
            r"ledger_postings\.transaction_id names transactions 999998, which does not "
            r"exist \(1 row\)"
        ],
    ),
    "events of an account that does not exist": (
        ["UPDATE events SET account_id = 999997 WHERE account_id = $1"],
        [r"events\.account_id names accounts 999997, which does not exist \(3 rows\)"],
    ),
    "an event of a transaction that does not exist": (
        ["UPDATE events SET transaction_id = 999996 WHERE id = (SELECT max(id) FROM events)"],
        [r"events\.transaction_id names transactions 999996, which does not exist \(1 row\)"],
    ),
    "a payment received by an account that does not exist": (
        ["UPDATE transactions SET account_id = 999995 WHERE operation = 'PAYMENT'"],
        [r"transactions\.account_id names accounts 999995, which does not exist \(1 row\)"],
    ),
    "a limit count of an account that does not exist": (
        ["INSERT INTO limit_usage (account_id, bucket, used) VALUES (999994, now(), 0)"],
        [r"limit_usage\.account_id names accounts 999994, which does not exist \(1 row\)"],
    ),
}


@pytest.mark.parametrize(("damage", "expected"), BROKEN.values(), ids=BROKEN.keys())
async def test_each_broken_invariant_is_reported(
    rt: Runtime, damage: list[str], expected: list[str]
) -> None:
    account_id = await healthy(rt)
    async with rolled_back(rt) as conn:
        for statement in damage:
            await conn.execute(statement, *([account_id] if "$1" in statement else []))
        found = await verify.problems(conn)
    assert len(found) == len(expected), found
    for problem, pattern in zip(found, expected, strict=True):
        assert re.fullmatch(pattern.replace("{id}", str(account_id)) + ".*", problem), found
    async with rt.db.connection() as conn:
        assert await verify.problems(conn) == []  # rolled back: healthy again


async def test_every_problem_is_reported_not_just_the_first(rt: Runtime) -> None:
    account_id = await healthy(rt)
    other = (await make_account(rt, name="Outra", balance="1.00")).account_id
    async with rolled_back(rt) as conn:
        await conn.execute("UPDATE accounts SET available = available + 1 WHERE id = $1", other)
        await conn.execute(
            "UPDATE limit_usage SET used = used + 1 WHERE account_id = $1", account_id
        )
        await conn.execute(
            f"UPDATE ledger_postings SET amount = amount + 3 WHERE id = {SYSTEM_POSTING}"
        )
        found = await verify.problems(conn)
    assert len(found) == 3, found
    assert found[0].startswith("entry ") and found[0].endswith("(sum 3)")
    assert found[1].startswith(f"account {other}: available 101 (journal 100)")
    assert found[2].startswith(f"account {account_id}: limit usage at ")
