"""CPF and CNPJ: form and check digits, including the alphanumeric CNPJ.

CPF: 11 digits, the last two mod-11 check digits. CNPJ: 14 characters, the first 12 of
`[0-9A-Z]` (purely numeric CNPJs are the special case the alphanumeric rule reduces to)
and 2 numeric check digits; each character counts as its ASCII code minus 48 in the usual
mod-11 weights, so `A` is 17 and a digit is its own value.

Form checks are ASCII-only on purpose: Python's `\\d` and `str.isdigit` also accept digits
of other scripts, which no settling bank would.
"""

from __future__ import annotations

import re
from operator import mul
from typing import Literal

_CPF = re.compile(r"[0-9]{11}")
_CNPJ = re.compile(r"[0-9A-Z]{12}[0-9]{2}")
_CPF_BASE = re.compile(r"[0-9]{9}")
_CNPJ_BASE = re.compile(r"[0-9A-Z]{12}")
_SEPARATORS = str.maketrans("", "", ".-/ ")
_CPF_WEIGHTS = (10, 9, 8, 7, 6, 5, 4, 3, 2)
_CNPJ_WEIGHTS = (5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)


def only_document_chars(value: str) -> str:
    """Drop the punctuation of a formatted document (`123.456.789-09`) and uppercase it.

    Clients copy documents as printed; the stored and compared form is the bare one.
    Lowercase letters are uppercased because an alphanumeric CNPJ is case-insensitive.
    """
    return value.translate(_SEPARATORS).upper()


def is_cpf_form(value: str) -> bool:
    """11 ASCII digits, check digits not verified (cash-out keys take the form only)."""
    return _CPF.fullmatch(value) is not None


def is_cnpj_form(value: str) -> bool:
    """12 characters of `[0-9A-Z]` then 2 digits, check digits not verified."""
    return _CNPJ.fullmatch(value) is not None


def document_kind(value: str) -> Literal["CPF", "CNPJ"] | None:
    """Which document a bare value has the form of; the two lengths never overlap."""
    if is_cpf_form(value):
        return "CPF"
    if is_cnpj_form(value):
        return "CNPJ"
    return None


def _check_digits(base: str, weights: tuple[int, ...], lead: int) -> str:
    """The two mod-11 check digits of `base`: the first weighs it by `weights`, the second
    weighs it and the first digit by `lead` followed by `weights`. Each character counts as
    its code minus 48 (a digit its value, `A` 17)."""
    values = [ord(c) - 48 for c in base]
    first = _mod11(sum(map(mul, values, weights)))
    second = _mod11(lead * values[0] + sum(map(mul, values[1:], weights)) + weights[-1] * first)
    return f"{first}{second}"


def _mod11(total: int) -> int:
    rest = total % 11
    return 0 if rest < 2 else 11 - rest


def _cpf_digits(base9: str) -> str:
    return _check_digits(base9, _CPF_WEIGHTS, 11)


def _cnpj_digits(base12: str) -> str:
    return _check_digits(base12, _CNPJ_WEIGHTS, 6)


def is_valid_cpf(value: str) -> bool:
    """A CPF with correct check digits.

    A run of one digit (`11111111111`) has correct check digits yet is never issued; it is
    what people type to get past a form, so it is refused.
    """
    if not is_cpf_form(value) or len(set(value)) == 1:
        return False
    return value[9:] == _cpf_digits(value[:9])


def is_valid_cnpj(value: str) -> bool:
    """A CNPJ, numeric or alphanumeric, with correct check digits; `00000000000000` refused."""
    if not is_cnpj_form(value) or len(set(value)) == 1:
        return False
    return value[12:] == _cnpj_digits(value[:12])


def is_valid_document(value: str) -> bool:
    """A valid CPF or CNPJ in bare form (callers strip punctuation first)."""
    return is_valid_cpf(value) or is_valid_cnpj(value)


def make_cpf(base9: str) -> str:
    """The valid CPF that starts with these 9 digits: for tests and the sandbox's holders."""
    if _CPF_BASE.fullmatch(base9) is None:
        raise ValueError("a CPF base is 9 digits")
    return base9 + _cpf_digits(base9)
