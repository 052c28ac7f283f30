"""Account rows: identity, balances, limits, fees."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from pixgate.core.db.batches import read_by_key
from pixgate.core.db.pool import Connection, Database
from pixgate.core.labels import SplitFrequency

EDITABLE = ("transaction_limit", "daily_limit", "night_limit", "fees", "split_frequency")


@dataclass(frozen=True, slots=True)
class Account:
    """An `accounts` row. Limits are cents (None: the settings' default); `fees` is
    `{operation: {"fixed": "0.50", "percent": "1.0"}}` (`accounts.service.fees`)."""

    id: int
    name: str
    document: str | None
    available: int
    blocked: int
    transaction_limit: int | None
    daily_limit: int | None
    night_limit: int | None
    fees: dict[str, Any]
    split_frequency: SplitFrequency
    created_at: datetime

    @classmethod
    def from_record(cls, r: asyncpg.Record) -> Account:
        row = dict(r)
        row["split_frequency"] = SplitFrequency(row["split_frequency"])
        return cls(**row)


@dataclass(frozen=True, slots=True)
class Terms:
    """What an outgoing payment is priced from: the account's fees and limits."""

    id: int
    fees: dict[str, Any]
    transaction_limit: int | None
    daily_limit: int | None
    night_limit: int | None

    @classmethod
    def from_record(cls, r: asyncpg.Record) -> Terms:
        return cls(**r)


@dataclass(frozen=True, slots=True)
class Balance:
    """An account's two books, in cents."""

    id: int
    available: int
    blocked: int

    @classmethod
    def from_record(cls, r: asyncpg.Record) -> Balance:
        return cls(r["id"], r["available"], r["blocked"])


async def insert(conn: Connection, *, name: str, document: str | None) -> int:
    account_id: int = await conn.fetchval(
        "INSERT INTO accounts (name, document) VALUES ($1, $2) RETURNING id", name, document
    )
    return account_id


async def get(conn: Connection, account_id: int) -> Account | None:
    row = await conn.fetchrow("SELECT * FROM accounts WHERE id = $1", account_id)
    return None if row is None else Account.from_record(row)


async def fees_of(conn: Connection, account_id: int) -> dict[str, Any]:
    """The account's `fees` column (`{}`: none configured, or no such account)."""
    fees: dict[str, Any] | None = await conn.fetchval(
        "SELECT fees FROM accounts WHERE id = $1", account_id
    )
    return fees or {}


async def split_frequency_of(conn: Connection, account_id: int) -> SplitFrequency:
    """When the account's deferred splits are paid out; the account must exist."""
    frequency: str | None = await conn.fetchval(
        "SELECT split_frequency FROM accounts WHERE id = $1", account_id
    )
    if frequency is None:
        raise LookupError(f"account {account_id} does not exist")
    return SplitFrequency(frequency)


async def list_all(conn: Connection) -> list[Account]:
    return [Account.from_record(r) for r in await conn.fetch("SELECT * FROM accounts ORDER BY id")]


async def update(conn: Connection, account_id: int, changes: dict[str, Any]) -> bool:
    """Change the editable settings; column names come from EDITABLE only, never from input."""
    columns = [c for c in EDITABLE if c in changes]
    if not columns:
        return await get(conn, account_id) is not None
    assignments = ", ".join(f"{column} = ${i + 2}" for i, column in enumerate(columns))
    status = await conn.execute(
        f"UPDATE accounts SET {assignments} WHERE id = $1",  # noqa: S608 - names are constants
        account_id,
        *(changes[c] for c in columns),
    )
    return bool(status == "UPDATE 1")


BALANCES = read_by_key(
    "SELECT id, available, blocked FROM accounts WHERE id = ANY($1::bigint[])",
    "id",
    Balance.from_record,
)


async def balance(db: Database, account_id: int) -> Balance | None:
    """An account's balances, read with the other balance reads asked for meanwhile."""
    return await db.batcher(BALANCES).submit("accounts", account_id)


class TermsCache:
    """Each account's fees and limits, read once per process.

    The hot path prices a payout from this copy and `payments.create_payout` compares it with
    the locked row, so a copy made stale by `pixgate accounts update` costs one retry, never
    a wrong fee or limit. One small record per account that paid out from this process.
    """

    def __init__(self) -> None:
        self._rows: dict[int, Terms] = {}

    async def get(self, db: Database, account_id: int) -> Terms | None:
        """A pool connection is taken only on a miss: a hit costs no I/O at all."""
        row = self._rows.get(account_id)
        if row is None:
            async with db.connection() as conn:
                found = await conn.fetchrow(
                    "SELECT id, fees, transaction_limit, daily_limit, night_limit "
                    "FROM accounts WHERE id = $1",
                    account_id,
                )
            if found is not None:
                row = self._rows[account_id] = Terms.from_record(found)
        return row

    def forget(self, account_id: int) -> None:
        self._rows.pop(account_id, None)
