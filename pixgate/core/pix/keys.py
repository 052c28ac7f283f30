"""PIX key formats: per keyType for cash-out, per split type, for DICT,
for lookups by key, and the one canonical spelling a key is stored and matched in.

Every check is on form. Cash-out takes document keys by form only (the settling bank
judges the key); split keys are our own payouts, so their CPF/CNPJ check digits are
verified here. Patterns are ASCII-only and matched against the whole string, so digits of
other scripts and a trailing newline never pass.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pixgate.core.pix.documents import (
    is_cnpj_form,
    is_cpf_form,
    is_valid_cnpj,
    is_valid_cpf,
    only_document_chars,
)

MAX_EMAIL = 77
"""The DICT's limit for an e-mail key (and for any key: the `chave` of a cob)."""

_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# RFC 5322 dot-atom local part (no quoted strings: no PSP accepts them as keys) and a DNS
# host name with at least one dot and an alphabetic top-level label.
_EMAIL = re.compile(rf"(?=[^@]{{1,64}}@){_ATOM}(?:\.{_ATOM})*@(?:{_LABEL}\.)+[A-Za-z]{{2,63}}")
_PHONE = re.compile(r"[0-9]{10,11}")
_PHONE_E164 = re.compile(r"\+55[0-9]{10,11}")
_HEX = "[0-9A-Fa-f]"
_UUID_HYPHENATED = re.compile(rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")
_UUID_PLAIN = re.compile(rf"{_HEX}{{32}}")

DICT_KEY_PATTERN = (
    r"^(?:[0-9]{11}|[0-9A-Z]{12}[0-9]{2}|\+55[0-9]{10,11}"
    rf"|{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
    rf"|{_ATOM}(?:\.{_ATOM})*@(?:{_LABEL}\.)+[A-Za-z]{{2,63}})$"
)
"""`dict_key_type`'s formats as one JSON Schema (ECMA 262) pattern, for the OpenAPI document:
the e-mail's 64-character local part is left to the 77-character limit of the field."""

DictKeyType = Literal["CPF", "CNPJ", "EMAIL", "PHONE", "EVP"]
DetectedKeyType = Literal["CPF", "CNPJ", "PHONE", "EMAIL", "RANDOM"]


class KeyType(StrEnum):
    """`details.keyType` of a cash-out."""

    DOCUMENT = "DOCUMENT"
    EMAIL = "EMAIL"
    PHONE = "PHONE"
    RANDOM = "RANDOM"


class SplitKeyType(StrEnum):
    """`splits[].pixKeyType` of a cash-in."""

    EMAIL = "EMAIL"
    PHONE = "PHONE"
    CPF = "CPF"
    CNPJ = "CNPJ"
    RANDOM = "RANDOM"


PHONE_FORM = (
    "area code and number, 10 or 11 digits, with or without +55 (11987654321 or +5511987654321)"
)
"""How a PHONE key may be written wherever its type is given: the spec's bare digits, or the
DICT's `+55` spelling the key lookup and the statements show, so one key reads the same
everywhere."""

DICT_KEY_FORM = (
    "a CPF (11 digits), a CNPJ (14 characters), a phone as +55 and 10 or 11 digits "
    "(+5511987654321), an e-mail, or a hyphenated random key (EVP)"
)
"""The forms a key takes where no type comes with it (the Central Bank's DICT forms): a bare
phone would read as a CPF, so the `+55` is what marks a phone."""

ANY_KEY_FORM = (
    "a CPF (11 digits), a CNPJ (14 characters), a phone (10 or 11 digits, with or without +55), "
    "an e-mail, or a random key (EVP: a UUID)"
)
"""The spellings `detect_key_type` tells apart: the DICT's, and the typed family's."""

KEY_FORMS: dict[str, str] = {
    "DOCUMENT": "a CPF (11 digits) or a CNPJ (14 characters), with or without punctuation",
    "CPF": "a CPF with valid check digits (11 digits, with or without punctuation)",
    "CNPJ": "a CNPJ with valid check digits (14 characters, with or without punctuation)",
    "EMAIL": "an e-mail address of at most 77 characters",
    "PHONE": PHONE_FORM,
    "RANDOM": "a random key (EVP): a UUID, hyphenated or as 32 hexadecimal digits",
}
"""The expected form of each typed key, named by the error a key of the wrong form gets."""


def key_form_error(field: str, key_type: str) -> str:
    """The message for a key not in its type's form: what was wrong and what is expected."""
    return f"{field} is not a valid {key_type} key: expected {KEY_FORMS[key_type]}"


def is_phone(value: str) -> bool:
    """A phone key in either spelling: area code and number, with or without `+55`."""
    return _PHONE.fullmatch(value) is not None or _PHONE_E164.fullmatch(value) is not None


def is_email(value: str) -> bool:
    """A plausible e-mail key: `local@domain.tld`, at most 77 characters as the DICT allows."""
    return len(value) <= MAX_EMAIL and _EMAIL.fullmatch(value) is not None


def is_evp(value: str, *, allow_plain: bool = True) -> bool:
    """A random key (EVP): a UUID in any case, hyphenated or, unless refused, as 32 hex."""
    if _UUID_HYPHENATED.fullmatch(value):
        return True
    return allow_plain and _UUID_PLAIN.fullmatch(value) is not None


def is_valid_cash_out_key(key: str, key_type: KeyType) -> bool:
    """A key in the form its cash-out keyType asks for.

    Documents by form only: a key is whatever the DICT holds, and its check digits are
    the settling bank's to judge. Phones without `+55`, as the spec's table says.
    """
    match key_type:
        case KeyType.DOCUMENT:
            return is_cpf_form(key) or is_cnpj_form(key)
        case KeyType.EMAIL:
            return is_email(key)
        case KeyType.PHONE:
            return is_phone(key)
        case KeyType.RANDOM:
            return is_evp(key)


def is_valid_split_key(key: str, key_type: SplitKeyType) -> bool:
    """A split recipient's key; documents need correct check digits.

    Splits are paid out later without the client watching, so a mistyped CPF/CNPJ is
    caught at charge creation instead of failing a payout. Phones with or without `+55`.
    """
    match key_type:
        case SplitKeyType.CPF:
            return is_valid_cpf(key)
        case SplitKeyType.CNPJ:
            return is_valid_cnpj(key)
        case SplitKeyType.EMAIL:
            return is_email(key)
        case SplitKeyType.PHONE:
            return is_phone(key)
        case SplitKeyType.RANDOM:
            return is_evp(key)


def dict_key_type(key: str) -> DictKeyType | None:
    """The DICT family's key formats, which are the Central Bank's own.

    Phones must carry `+55` and EVPs must be hyphenated: that is how the DICT stores them,
    and it is what removes the ambiguity between an 11-digit CPF and a mobile number.
    """
    if is_cpf_form(key):
        return "CPF"
    if is_cnpj_form(key):
        return "CNPJ"
    if _PHONE_E164.fullmatch(key):
        return "PHONE"
    if is_evp(key, allow_plain=False):
        return "EVP"
    if is_email(key):
        return "EMAIL"
    return None


def detect_key_type(key: str) -> DetectedKeyType | None:
    """The type of a key written in any spelling the public family accepts.

    Eleven bare digits are both a CPF form and a mobile number: they are a CPF when the
    check digits are right (a phone number passes by chance once in a hundred), a phone
    otherwise. Ten digits or the `+55` form are always a phone.
    """
    if is_valid_cpf(key):
        return "CPF"
    if is_cnpj_form(key):
        return "CNPJ"
    if is_phone(key):
        return "PHONE"
    if is_evp(key):
        return "RANDOM"
    if is_email(key):
        return "EMAIL"
    return None


def _canonical_evp(value: str, key: str) -> str:
    """`str(uuid.UUID(value))`, spelled out for the forms `is_evp` takes: every cash-out to a
    random key pays for this, and parsing the UUID to print it again cost twice as much."""
    if not is_evp(value):
        raise ValueError(f"{key!r} is not a random key")
    h = value.lower().replace("-", "")
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def normalize_key(key: str, key_type: str) -> str:
    """One canonical spelling per key, so every spelling of a key matches the same rows.

    `key_type` is any of the type names above (`DOCUMENT`, `CPF`, `CNPJ`, `EMAIL`, `PHONE`,
    `RANDOM`, `EVP`), in any case. Documents: bare and uppercased. E-mails: lowercased, as
    the DICT registers them. Phones: `+55` + digits. Random keys: the lowercase hyphenated
    36-character UUID. Raises `ValueError` for an unknown type or a random key that is
    not a UUID; other keys are expected to have been validated first.
    """
    value = key.strip()
    match key_type.upper():
        case "DOCUMENT" | "CPF" | "CNPJ":
            return only_document_chars(value)
        case "EMAIL":
            return value.lower()
        case "PHONE":
            return f"+55{value.removeprefix('+55')}"
        case "RANDOM" | "EVP":
            return _canonical_evp(value, key)
        case _:
            raise ValueError(f"unknown key type {key_type!r}")
