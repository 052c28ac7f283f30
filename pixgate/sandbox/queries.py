"""The sandbox's DICT directory rows, and our accounts' keys as its DICT sees them.

A key one of our accounts holds (`account_keys`) is that account's, whatever an integrator
registered in `sandbox_dict_keys`: the DICT names one holder per key, and the gateway is
the institution of its own accounts' keys."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import asyncpg

from pixgate.core.db.batches import MAX_READS, Statement, read_by_key
from pixgate.core.db.pool import Connection, Database
from pixgate.provider.dict_keys import KeyHolder


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


@dataclass(frozen=True, slots=True)
class HouseKey:
    """One of our accounts' keys: the account and its holder (the bank adds our ISPB)."""

    key: str
    key_type: str
    account_id: int
    name: str
    document: str | None


@dataclass(frozen=True, slots=True)
class DictEntry:
    """What the sandbox DICT holds of a key: one of our accounts', or a registered one."""

    house: HouseKey | None
    holder: KeyHolder | None


def _house(r: asyncpg.Record) -> HouseKey | None:
    if r["house_key"] is None:
        return None
    return HouseKey(
        r["house_key"],
        r["house_key_type"],
        r["house_account"],
        r["house_name"],
        r["house_document"],
    )


def _entry(r: asyncpg.Record) -> DictEntry:
    return DictEntry(_house(r), None if r["key"] is None else _holder(r))


KEYS = read_by_key(
    """
    SELECT a.key AS asked, ak.key AS house_key, ak.key_type AS house_key_type,
           ak.account_id AS house_account, acc.name AS house_name,
           acc.document AS house_document, k.*
    FROM unnest($1::text[]) AS a (key)
    LEFT JOIN account_keys ak ON ak.key = a.key
    LEFT JOIN accounts acc ON acc.id = ak.account_id
    LEFT JOIN sandbox_dict_keys k ON k.key = a.key
    WHERE ak.key IS NOT NULL OR k.key IS NOT NULL
    """,
    "asked",
    _entry,
)


async def get(db: Database, key: str) -> DictEntry | None:
    """A key's entry, read with the others asked for meanwhile (every settlement asks)."""
    return await db.batcher(KEYS).submit("sandbox_dict_keys", key)


@dataclass(frozen=True, slots=True)
class PaymentView:
    """What the sandbox SPI reads to settle a payment: the destination key's entries (None:
    nobody registered it, no account of ours holds it) and the instructions kept with the
    payout (opaque here)."""

    entry: DictEntry
    instructions: str | None


VIEWS = """
SELECT i.value AS instructions, ak.key AS house_key, ak.key_type AS house_key_type,
       ak.account_id AS house_account, acc.name AS house_name,
       acc.document AS house_document, k.*
FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS a (key, transaction_id, ord)
LEFT JOIN account_keys ak ON ak.key = a.key
LEFT JOIN accounts acc ON acc.id = ak.account_id
LEFT JOIN sandbox_dict_keys k ON k.key = a.key
LEFT JOIN LATERAL (
    SELECT x.value FROM provider_instructions x
    WHERE x.transaction_id = a.transaction_id LIMIT 1
) AS i ON true
ORDER BY a.ord
"""
"""Each key's entries and each payout's instructions, in the order asked. The instructions are
looked up by the payout's key (a LATERAL lookup of one row; its LIMIT, needless on a primary
key, keeps PostgreSQL from folding it back into a join): a connection keeps the plan it made
for this statement, and a join planned while the table, which gains a row with every payout,
was nearly empty read all of it on every call."""


async def _send_payment_views(
    conn: Connection, asked: Sequence[tuple[str, int]]
) -> list[PaymentView]:
    rows = await conn.fetch(
        VIEWS,
        [key for key, _ in asked],
        [transaction_id for _, transaction_id in asked],
    )
    return [PaymentView(_entry(r), r["instructions"]) for r in rows]


PAYMENT_VIEWS = Statement(_send_payment_views, max_items=MAX_READS)


async def payment_view(db: Database, key: str, transaction_id: int) -> PaymentView:
    """A key's entry and a payout's instructions in one read, batched with the others asked
    for meanwhile: every settlement asks, and one statement for both keeps a settlement's
    reads where they were before instructions were kept."""
    return await db.batcher(PAYMENT_VIEWS).submit("sandbox_payment_views", (key, transaction_id))
