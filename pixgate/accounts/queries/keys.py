"""The PIX keys that receive into our accounts (`account_keys`): the DICT entries the gateway
holds for its own accounts. Keys are stored in their canonical spelling
(`core.pix.keys.normalize_key`), so a lookup must normalize first."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from pixgate.core.db.batches import read_by_key
from pixgate.core.db.pool import Connection, Database
from pixgate.core.pix.keys import DictKeyType


@dataclass(frozen=True, slots=True)
class AccountKey:
    key: str
    key_type: DictKeyType
    account_id: int
    created_at: datetime

    @classmethod
    def from_record(cls, r: asyncpg.Record) -> AccountKey:
        return cls(r["key"], r["key_type"], r["account_id"], r["created_at"])


async def add(conn: Connection, account_id: int, key: str, key_type: DictKeyType) -> bool:
    """Register `key` to the account; False if any account holds it already."""
    added = await conn.fetchval(
        "INSERT INTO account_keys (key, key_type, account_id) VALUES ($1, $2, $3) "
        "ON CONFLICT (key) DO NOTHING RETURNING true",
        key,
        key_type,
        account_id,
    )
    return bool(added)


async def add_random(conn: Connection, account_id: int) -> str:
    """A new random (EVP) key for the account, as every account gets at creation."""
    key = str(uuid.uuid4())
    await add(conn, account_id, key, "EVP")
    return key


async def owner_of(conn: Connection, key: str) -> AccountKey | None:
    row = await conn.fetchrow("SELECT * FROM account_keys WHERE key = $1", key)
    return None if row is None else AccountKey.from_record(row)


async def owner_locked(conn: Connection, key: str) -> AccountKey | None:
    """The key's holder, its row share-locked until the transaction ends: a payment settled
    in the house to this key credits the account that holds it at commit (a removal waits)."""
    row = await conn.fetchrow("SELECT * FROM account_keys WHERE key = $1 FOR KEY SHARE", key)
    return None if row is None else AccountKey.from_record(row)


OWNERS = read_by_key(
    "SELECT * FROM account_keys WHERE key = ANY($1::text[])", "key", AccountKey.from_record
)


async def find_owner(db: Database, key: str) -> AccountKey | None:
    """`owner_of` on a pool connection, read with the others asked for meanwhile: every
    cash-out asks whether its key is one of ours."""
    return await db.batcher(OWNERS).submit("account_keys", key)


async def of_account(conn: Connection, account_id: int) -> list[AccountKey]:
    rows = await conn.fetch(
        "SELECT * FROM account_keys WHERE account_id = $1 ORDER BY created_at, key", account_id
    )
    return [AccountKey.from_record(r) for r in rows]


async def remove(conn: Connection, account_id: int, key: str) -> bool:
    """Unregister the account's `key`; False if the account does not hold it."""
    removed = await conn.fetchval(
        "DELETE FROM account_keys WHERE account_id = $1 AND key = $2 RETURNING true",
        account_id,
        key,
    )
    return bool(removed)
