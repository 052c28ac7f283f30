"""The PIX keys of our accounts: what the gateway registers, lists and removes in the DICT
for them (`account_keys`), as the operator asks through `pixgate accounts keys`.

A key is taken in the Central Bank's forms (`core.pix.keys.dict_key_type`: a CPF, a CNPJ,
a `+55` phone, an e-mail, a hyphenated EVP) and stored in its canonical spelling, so a
payment to any spelling of it finds its account. A key names one account: a key another
account (or this one) holds is refused. A CPF or CNPJ key is the holder's own document,
as the DICT allows no other; a random key (EVP) is drawn by the gateway, never chosen.
"""

from __future__ import annotations

from pixgate.accounts.queries import keys as key_rows
from pixgate.accounts.queries.accounts import get as get_account
from pixgate.accounts.queries.keys import AccountKey
from pixgate.core.db.pool import Connection
from pixgate.core.errors import Conflict, NotFound, ValidationFailed
from pixgate.core.pix.keys import DICT_KEY_FORM, DictKeyType, dict_key_type, normalize_key
from pixgate.runtime import Runtime

DOCUMENT_TYPES: frozenset[DictKeyType] = frozenset({"CPF", "CNPJ"})


def canonical(key: str) -> tuple[str, DictKeyType]:
    """The key in its stored spelling and its type; ValidationFailed for any other form."""
    value = key.strip()
    key_type = dict_key_type(value)
    if key_type is None:
        raise ValidationFailed([f"key {key!r} is not a PIX key: expected {DICT_KEY_FORM}"])
    return normalize_key(value, key_type), key_type


async def add(rt: Runtime, account_id: int, key: str) -> AccountKey:
    """Register `key` to the account, in one transaction."""
    stored, key_type = canonical(key)
    async with rt.db.begin() as conn:
        document = await _document_of(conn, account_id)
        if key_type in DOCUMENT_TYPES and stored != document:
            raise ValidationFailed(
                [f"a {key_type} key must be the account's own document ({document or 'none'})"]
            )
        if not await key_rows.add(conn, account_id, stored, key_type):
            raise await _taken(conn, stored)
        added = await key_rows.owner_of(conn, stored)
    assert added is not None
    return added


async def add_random(rt: Runtime, account_id: int) -> AccountKey:
    """A new random key (EVP) for the account."""
    async with rt.db.begin() as conn:
        await _document_of(conn, account_id)
        added = await key_rows.owner_of(conn, await key_rows.add_random(conn, account_id))
    assert added is not None
    return added


async def list_of(rt: Runtime, account_id: int) -> list[AccountKey]:
    """The account's keys, oldest first."""
    async with rt.db.connection() as conn:
        await _document_of(conn, account_id)
        return await key_rows.of_account(conn, account_id)


async def remove(rt: Runtime, account_id: int, key: str) -> str:
    """Unregister one of the account's keys, written in any spelling; its stored spelling.
    Payments already received to it keep it as theirs."""
    stored, _ = canonical(key)
    async with rt.db.begin() as conn:
        await _document_of(conn, account_id)
        if not await key_rows.remove(conn, account_id, stored):
            raise NotFound(f"account {account_id} holds no key {stored}")
    return stored


async def _document_of(conn: Connection, account_id: int) -> str | None:
    """The account's document (None: it has none); NotFound when there is no such account."""
    account = await get_account(conn, account_id)
    if account is None:
        raise NotFound(f"account {account_id} not found")
    return account.document


async def _taken(conn: Connection, key: str) -> Conflict:
    holder = await key_rows.owner_of(conn, key)
    whose = "another account" if holder is None else f"account {holder.account_id}"
    return Conflict(f"key {key} is already held by {whose}")
