"""The sandbox's DICT directory rows."""

from __future__ import annotations

from typing import Literal, cast

import asyncpg

from pixgate.db.batches import read_by_key
from pixgate.db.pool import Connection, Database
from pixgate.domain.dict_keys import KeyHolder


async def upsert(conn: Connection, holder: KeyHolder, *, account_id: int) -> bool:
    """Register a key, or replace one this account registered: the sandbox lets an integrator
    reshape its own test directory. False, and nothing written, when another account
    registered the key (it would redirect or block that account's payments to it)."""
    status = await conn.execute(
        """
        INSERT INTO sandbox_dict_keys (key, key_type, name, document, ispb, bank_name,
                                       bank_code, branch, account_number, status, account_id)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        ON CONFLICT (key) DO UPDATE SET
            key_type = EXCLUDED.key_type, name = EXCLUDED.name, document = EXCLUDED.document,
            ispb = EXCLUDED.ispb, bank_name = EXCLUDED.bank_name, bank_code = EXCLUDED.bank_code,
            branch = EXCLUDED.branch, account_number = EXCLUDED.account_number,
            status = EXCLUDED.status
        WHERE sandbox_dict_keys.account_id = EXCLUDED.account_id
        """,
        holder.key,
        holder.key_type,
        holder.name,
        holder.document,
        holder.ispb,
        holder.bank_name,
        holder.bank_code,
        holder.branch,
        holder.account_number,
        holder.status,
        account_id,
    )
    return status != "INSERT 0 0"


def _holder(r: asyncpg.Record) -> KeyHolder:
    return KeyHolder(
        key=r["key"],
        key_type=r["key_type"],
        name=r["name"],
        document=r["document"],
        ispb=r["ispb"],
        bank_name=r["bank_name"],
        bank_code=r["bank_code"],
        branch=r["branch"],
        account_number=r["account_number"],
        status=cast(Literal["ACTIVE", "BLOCKED", "CLOSED"], r["status"]),
    )


KEYS = read_by_key("SELECT * FROM sandbox_dict_keys WHERE key = ANY($1::text[])", "key", _holder)


async def get(db: Database, key: str) -> KeyHolder | None:
    """A key's entry, read with the others asked for meanwhile (every settlement asks)."""
    return await db.batcher(KEYS).submit("sandbox_dict_keys", key)
