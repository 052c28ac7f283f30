"""Reading an account's transactions: the statement and the by-key list.

Every query takes `account_id`: it is the one place tenancy is enforced for these lists.
Pages are newest first with `id` as the tie-break, so a fixed set pages without gaps
or repeats. The WHERE clause holds only the filters given, so each combination gets
its own prepared statement and a plan on its own index (a catch-all `$1 IS NULL OR`
clause drifts to a generic plan that scans the account). The page is found on the
covering index and only its rows are fetched whole (a deferred join).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from pixgate.core.db.pool import Connection
from pixgate.core.labels import OperationType, TransactionStatus


@dataclass(frozen=True, slots=True)
class Transaction:
    """A `transactions` row: one money movement the integrator sees.

    `id` is the numeric key, `transaction_id` the public UUID; `kind` names the use case that
    wrote it (`core.labels.TransactionKind`, an open set: the column has no CHECK).
    `counterpart_ispb` and `counterpart_account_id` are the counterpart's link, written with
    the `counterpart` document from one `core.counterparts.Counterpart`.
    """

    id: int
    transaction_id: UUID
    account_id: int
    operation: OperationType
    kind: str
    status: TransactionStatus
    external_id: str | None
    idempotency_key: UUID | None
    amount: int
    fee: int
    end_to_end_id: str | None
    pix_key: str | None
    pix_key_type: str | None
    description: str | None
    counterpart: dict[str, Any] | None
    details: dict[str, Any]
    error_code: str | None
    error_message: str | None
    parent_id: int | None
    created_at: datetime
    processed_at: datetime | None
    counterpart_ispb: str | None
    counterpart_account_id: int | None

    @classmethod
    def from_record(cls, r: asyncpg.Record) -> Transaction:
        """A whole row (`SELECT *` / `RETURNING *`), converted once.

        Positional: the fields are declared in the table's column order
        (`tests/core/db/test_enums.py` checks it), so no per-row dict is built, and the two
        labels are looked up in a dict (calling an enum class costs several times more).
        The statement list reads 20 of these per request: about 2.5 us each instead of 7.
        """
        values = list(r)
        values[_OPERATION] = _OPERATIONS[values[_OPERATION]]
        values[_STATUS] = _STATUSES[values[_STATUS]]
        return cls(*values)


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Transaction))
"""`transactions`' columns in table order, as `Transaction` declares them."""
_OPERATION = COLUMNS.index("operation")
_STATUS = COLUMNS.index("status")
_OPERATIONS = {member.value: member for member in OperationType}
_STATUSES = {member.value: member for member in TransactionStatus}


BY_IDS = "SELECT * FROM transactions_by_ids($1::bigint[])"
"""Whole rows (`Transaction.from_record`) by their primary keys, `$1` an array; a key not
found has no row, a key asked twice has two. Each key is looked up by the primary key,
whatever the table's size, with a plan made once per session (`transactions_by_ids()`,
`sql/011_transaction_reads.sql`)."""


_COLUMNS = {
    "status": "status",
    "operation": "operation",
    "external_id": "external_id",
    "end_to_end_id": "end_to_end_id",
    "pix_key": "pix_key",
}


@dataclass(frozen=True, slots=True)
class Filters:
    account_id: int
    start: datetime
    end: datetime
    status: str | None = None
    operation: str | None = None
    external_id: str | None = None
    end_to_end_id: str | None = None
    pix_key: str | None = None

    def where(self) -> tuple[str, list[object]]:
        """The clause and its arguments; column names come from this module only."""
        clauses = ["account_id = $1", "created_at >= $2", "created_at < $3"]
        args: list[object] = [self.account_id, self.start, self.end]
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name in _COLUMNS and value is not None:
                args.append(value)
                clauses.append(f"{_COLUMNS[field.name]} = ${len(args)}")
        return " AND ".join(clauses), args


async def page(conn: Connection, f: Filters, *, offset: int, limit: int) -> list[Transaction]:
    where, args = f.where()
    n = len(args)
    rows = await conn.fetch(
        f"""
        SELECT t.* FROM (
            SELECT id, created_at FROM transactions WHERE {where}
            ORDER BY created_at DESC, id DESC
            OFFSET ${n + 1} LIMIT ${n + 2}
        ) AS chosen
        JOIN transactions t ON t.id = chosen.id
        ORDER BY chosen.created_at DESC, chosen.id DESC
        """,  # noqa: S608 - built from this module's constants
        *args,
        offset,
        limit,
    )
    return [Transaction.from_record(r) for r in rows]


async def count(conn: Connection, f: Filters, *, cap: int) -> int:
    """Rows matching the filters, counted up to `cap` (a bounded index range scan)."""
    where, args = f.where()
    total: int = await conn.fetchval(
        f"SELECT count(*) FROM (SELECT 1 FROM transactions WHERE {where} "  # noqa: S608
        f"LIMIT ${len(args) + 1}) AS matching",
        *args,
        cap,
    )
    return total


async def by_public_id(
    conn: Connection, account_id: int, transaction_id: UUID
) -> Transaction | None:
    """The account's transaction with this public transactionId (another account's is None)."""
    row = await conn.fetchrow(
        "SELECT * FROM transactions WHERE transaction_id = $1 AND account_id = $2",
        transaction_id,
        account_id,
    )
    return None if row is None else Transaction.from_record(row)
