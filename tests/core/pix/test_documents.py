"""CPF and CNPJ, numeric and alphanumeric."""

from __future__ import annotations

import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pixgate.core.pix.documents import (
    document_kind,
    is_cnpj_form,
    is_cpf_form,
    is_valid_cnpj,
    is_valid_cpf,
    is_valid_document,
    make_cpf,
    only_document_chars,
)
from tests.support import make_cnpj

VALID_CPFS = ["52998224725", "11144477735", "12345678909"]
VALID_CNPJS = ["11222333000181", "12345678000195", "12ABC34501DE35"]

cpf_bases = st.text(string.digits, min_size=9, max_size=9)
cnpj_bases = st.text(string.digits + string.ascii_uppercase, min_size=12, max_size=12)


def reference_check_digits(base: str, weights_from: int) -> str:
    """The Receita Federal's description, written independently of the module under test:
    weights run down from `weights_from` (CPF) or cycle 2..9 from the right (CNPJ)."""
    digits = ""
    for _ in range(2):
        body = base + digits
        values = [ord(c) - ord("0") for c in body]
        if weights_from:
            weights = list(range(weights_from + len(digits), 1, -1))
        else:
            weights = [2 + (i % 8) for i in range(len(values))][::-1]
        total = sum(v * w for v, w in zip(values, weights, strict=True))
        digit = 11 - total % 11
        digits += "0" if digit >= 10 else str(digit)
    return digits


class TestForms:
    def test_only_document_chars(self) -> None:
        assert only_document_chars("123.456.789-09") == "12345678909"
        assert only_document_chars("12.abc.345/01de-35") == "12ABC34501DE35"
        assert only_document_chars(" 11 222 333 ") == "11222333"

    @pytest.mark.parametrize("value", ["12345678909", "00000000000"])
    def test_cpf_form(self, value: str) -> None:
        assert is_cpf_form(value)
        assert document_kind(value) == "CPF"

    @pytest.mark.parametrize("value", ["11222333000181", "12ABC34501DE35", "ZZZZZZZZZZZZ00"])
    def test_cnpj_form(self, value: str) -> None:
        assert is_cnpj_form(value)
        assert document_kind(value) == "CNPJ"

    @pytest.mark.parametrize(
        "value",
        [
            "",
            "1234567890",
            "123456789012",
            "123.456.789-09",
            "1234567890a",
            "12345678909\n",
            "\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669\u0660\u0661",  # Arabic-Indic
            "12abc34501de35",  # lowercase: only_document_chars first
            "12ABC34501DEA5",  # check digits are numeric
            "1122233300018",
            "112223330001811",
        ],
    )
    def test_neither_form(self, value: str) -> None:
        assert document_kind(value) is None
        assert not is_valid_document(value)


class TestCheckDigits:
    @pytest.mark.parametrize("value", VALID_CPFS)
    def test_valid_cpf(self, value: str) -> None:
        assert is_valid_cpf(value)
        assert is_valid_document(value)
        assert not is_valid_cnpj(value)

    @pytest.mark.parametrize("value", VALID_CNPJS)
    def test_valid_cnpj(self, value: str) -> None:
        assert is_valid_cnpj(value)
        assert is_valid_document(value)
        assert not is_valid_cpf(value)

    @pytest.mark.parametrize("value", ["52998224724", "11144477736", "12345678900"])
    def test_wrong_cpf_digits(self, value: str) -> None:
        assert not is_valid_cpf(value)

    @pytest.mark.parametrize("value", ["11222333000182", "12ABC34501DE36", "12ABD34501DE35"])
    def test_wrong_cnpj_digits(self, value: str) -> None:
        assert not is_valid_cnpj(value)

    @pytest.mark.parametrize("digit", string.digits)
    def test_runs_of_one_digit_are_refused(self, digit: str) -> None:
        assert not is_valid_cpf(digit * 11)
        assert not is_valid_cnpj(digit * 14)

    def test_alphanumeric_example_of_the_receita(self) -> None:
        assert make_cnpj("12ABC34501DE") == "12ABC34501DE35"

    @given(cpf_bases)
    def test_make_cpf_matches_reference(self, base: str) -> None:
        assume(len(set(base)) > 1)
        cpf = make_cpf(base)
        assert cpf == base + reference_check_digits(base, 10)
        assert is_valid_cpf(cpf)

    @given(cnpj_bases)
    def test_make_cnpj_matches_reference(self, base: str) -> None:
        cnpj = make_cnpj(base)
        assert cnpj == base + reference_check_digits(base, 0)
        assume(len(set(cnpj)) > 1)  # runs of one digit are refused on purpose
        assert is_valid_cnpj(cnpj)
        assert is_valid_cnpj(only_document_chars(cnpj.lower()))

    @given(cpf_bases, st.integers(0, 1), st.integers(1, 9))
    def test_a_wrong_cpf_check_digit_is_caught(self, base: str, at: int, shift: int) -> None:
        cpf = make_cpf(base)
        position = 9 + at
        wrong = cpf[:position] + str((int(cpf[position]) + shift) % 10) + cpf[position + 1 :]
        assert not is_valid_cpf(wrong)

    @given(cnpj_bases, st.integers(0, 1), st.integers(1, 9))
    def test_a_wrong_cnpj_check_digit_is_caught(self, base: str, at: int, shift: int) -> None:
        cnpj = make_cnpj(base)
        position = 12 + at
        wrong = cnpj[:position] + str((int(cnpj[position]) + shift) % 10) + cnpj[position + 1 :]
        assert not is_valid_cnpj(wrong)

    @pytest.mark.parametrize("base", ["", "12345678", "1234567890", "12345678a"])
    def test_make_cpf_refuses_bad_bases(self, base: str) -> None:
        with pytest.raises(ValueError, match="9 digits"):
            make_cpf(base)

    @pytest.mark.parametrize("base", ["", "12ABC34501D", "12abc34501de", "12ABC34501D-"])
    def test_make_cnpj_refuses_bad_bases(self, base: str) -> None:
        with pytest.raises(ValueError, match="12 characters"):
            make_cnpj(base)
