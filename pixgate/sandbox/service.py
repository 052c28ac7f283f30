"""Sandbox-only actions on the simulated settling bank."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pixgate.accounts.public import key_owner
from pixgate.core.errors import Conflict, ValidationFailed
from pixgate.core.pix.documents import (
    is_cnpj_form,
    is_cpf_form,
    is_valid_document,
    only_document_chars,
)
from pixgate.core.pix.keys import SplitKeyType, is_email, is_evp, is_valid_split_key, normalize_key
from pixgate.provider.dict_keys import KeyHolder
from pixgate.runtime import Runtime
from pixgate.sandbox import queries as sandbox_dict

# Every key type either family uses, and how its keys look.
_FORMATS: dict[str, Callable[[str], bool]] = {
    "CPF": is_cpf_form,
    "CNPJ": is_cnpj_form,
    "DOCUMENT": lambda key: is_cpf_form(key) or is_cnpj_form(key),
    "EMAIL": is_email,
    "PHONE": lambda key: is_valid_split_key(key, SplitKeyType.PHONE),
    "EVP": is_evp,
    "RANDOM": is_evp,
}


async def register_key(
    rt: Runtime,
    account_id: int,
    *,
    key: str,
    key_type: str,
    name: str,
    document: str,
    ispb: str,
    bank_name: str,
    bank_code: str,
    branch: str,
    account_number: str,
    status: Literal["ACTIVE", "BLOCKED", "CLOSED"],
) -> KeyHolder:
    """Keys are stored in their canonical spelling, so every family's lookups find them. A
    key one of our accounts holds is that account's in the DICT: it cannot be registered."""
    if not _FORMATS[key_type](key):
        raise ValidationFailed([f"key {key!r} is not a valid {key_type} key"])
    holder_document = only_document_chars(document)
    if not is_valid_document(holder_document):
        raise ValidationFailed(["document must be a valid CPF or CNPJ"])
    holder = KeyHolder(
        key=normalize_key(key, key_type),
        key_type=key_type,
        name=name,
        document=holder_document,
        ispb=ispb,
        bank_name=bank_name,
        bank_code=bank_code,
        branch=branch,
        account_number=account_number,
        status=status,
    )
    async with rt.db.begin() as conn:
        if await key_owner(conn, holder.key) is not None:
            raise Conflict("this key is held by an account of this gateway")
        if not await sandbox_dict.upsert(conn, holder, account_id=account_id):
            raise Conflict("this key is registered in the sandbox DICT by another account")
    return holder
