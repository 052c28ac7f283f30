"""PIX key formats: per keyType for cash-out (4.2), per split type (4.3), for DICT (4.13)."""

from __future__ import annotations

import re
import uuid
from enum import StrEnum
from typing import Literal

from pixgate.domain.documents import is_cnpj_form, is_cpf_form, is_valid_cnpj, is_valid_cpf

_EMAIL = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$"
)
_PHONE = re.compile(r"^\d{10,11}$")
_PHONE_E164 = re.compile(r"^\+55\d{10,11}$")
_UUID_HYPHENATED = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
_UUID_PLAIN = re.compile(r"^[0-9a-fA-F]{32}$")
MAX_EMAIL = 77


class KeyType(StrEnum):
    DOCUMENT = "DOCUMENT"
    EMAIL = "EMAIL"
    PHONE = "PHONE"
    RANDOM = "RANDOM"


class SplitKeyType(StrEnum):
    EMAIL = "EMAIL"
    PHONE = "PHONE"
    CPF = "CPF"
    CNPJ = "CNPJ"
    RANDOM = "RANDOM"


def is_email(value: str) -> bool:
    return len(value) <= MAX_EMAIL and bool(_EMAIL.match(value))


def is_evp(value: str, *, allow_plain: bool = True) -> bool:
    return bool(_UUID_HYPHENATED.match(value) or (allow_plain and _UUID_PLAIN.match(value)))


def is_valid_cash_out_key(key: str, key_type: KeyType) -> bool:
    """Form only: a document key's check digits are the settling bank's to judge."""
    match key_type:
        case KeyType.DOCUMENT:
            return is_cpf_form(key) or is_cnpj_form(key)
        case KeyType.EMAIL:
            return is_email(key)
        case KeyType.PHONE:
            return bool(_PHONE.match(key))
        case KeyType.RANDOM:
            return is_evp(key)


def is_valid_split_key(key: str, key_type: SplitKeyType) -> bool:
    match key_type:
        case SplitKeyType.CPF:
            return is_valid_cpf(key)
        case SplitKeyType.CNPJ:
            return is_valid_cnpj(key)
        case SplitKeyType.EMAIL:
            return is_email(key)
        case SplitKeyType.PHONE:
            return bool(_PHONE.match(key) or _PHONE_E164.match(key))
        case SplitKeyType.RANDOM:
            return is_evp(key)


def dict_key_type(key: str) -> Literal["CPF", "CNPJ", "EMAIL", "PHONE", "EVP"] | None:
    """The DICT family's formats (4.13): phones carry +55, EVPs are hyphenated UUIDs."""
    if is_cpf_form(key):
        return "CPF"
    if is_cnpj_form(key):
        return "CNPJ"
    if _PHONE_E164.match(key):
        return "PHONE"
    if is_evp(key, allow_plain=False):
        return "EVP"
    if is_email(key):
        return "EMAIL"
    return None


def detect_key_type(key: str) -> Literal["CPF", "CNPJ", "PHONE", "EMAIL", "RANDOM"] | None:
    """Any accepted spelling of a key, for lookups by key (4.7)."""
    if is_cpf_form(key):
        return "CPF"
    if is_cnpj_form(key):
        return "CNPJ"
    if _PHONE.match(key) or _PHONE_E164.match(key):
        return "PHONE"
    if is_evp(key):
        return "RANDOM"
    if is_email(key):
        return "EMAIL"
    return None


def normalize_key(key: str, key_type: str) -> str:
    """One canonical spelling per key, so the same key always matches the same rows.

    Documents uppercased without punctuation; e-mails lowercased; phones as `+55` + digits;
    random keys as lowercase hyphenated UUIDs.
    """
    kind = key_type.upper()
    if kind in ("EMAIL",):
        return key.strip().lower()
    if kind == "PHONE":
        digits = key.removeprefix("+55") if key.startswith("+55") else key
        return f"+55{digits}"
    if kind in ("RANDOM", "EVP"):
        return str(uuid.UUID(key))
    return key.strip().upper()
