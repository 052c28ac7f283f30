"""CPF and CNPJ: form and check digits, including the alphanumeric CNPJ (D29).

Alphanumeric CNPJ: 12 characters of [0-9A-Z] then 2 numeric check digits; each
character counts as its ASCII code minus 48 in the usual mod-11 weights.
"""

from __future__ import annotations

import re
from typing import Literal

_CPF = re.compile(r"^\d{11}$")
_CNPJ = re.compile(r"^[0-9A-Z]{12}\d{2}$")
_SEPARATORS = str.maketrans("", "", ".-/ ")


def only_document_chars(value: str) -> str:
    """Drop the punctuation of formatted documents (`123.456.789-09`) and uppercase."""
    return value.translate(_SEPARATORS).upper()


def is_cpf_form(value: str) -> bool:
    return bool(_CPF.match(value))


def is_cnpj_form(value: str) -> bool:
    return bool(_CNPJ.match(value))


def document_kind(value: str) -> Literal["CPF", "CNPJ"] | None:
    if is_cpf_form(value):
        return "CPF"
    if is_cnpj_form(value):
        return "CNPJ"
    return None


def _mod11_digit(values: list[int], weights: list[int]) -> int:
    rest = sum(v * w for v, w in zip(values, weights, strict=True)) % 11
    return 0 if rest < 2 else 11 - rest


def _cpf_digits(base9: str) -> str:
    values = [int(c) for c in base9]
    first = _mod11_digit(values, list(range(10, 1, -1)))
    second = _mod11_digit([*values, first], list(range(11, 1, -1)))
    return f"{first}{second}"


def _cnpj_digits(base12: str) -> str:
    values = [ord(c) - 48 for c in base12]
    weights = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    first = _mod11_digit(values, weights)
    second = _mod11_digit([*values, first], [6, *weights])
    return f"{first}{second}"


def is_valid_cpf(value: str) -> bool:
    if not is_cpf_form(value) or len(set(value)) == 1:
        return False
    return value[9:] == _cpf_digits(value[:9])


def is_valid_cnpj(value: str) -> bool:
    if not is_cnpj_form(value) or len(set(value)) == 1:
        return False
    return value[12:] == _cnpj_digits(value[:12])


def is_valid_document(value: str) -> bool:
    return is_valid_cpf(value) or is_valid_cnpj(value)


def make_cpf(base9: str) -> str:
    """A valid CPF from 9 digits (tests and the sandbox's synthetic holders)."""
    return base9 + _cpf_digits(base9)


def make_cnpj(base12: str) -> str:
    """A valid CNPJ from 12 characters of [0-9A-Z]."""
    return base12 + _cnpj_digits(base12)
