"""The one masking rule for documents shown in lists and payloads."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pixgate.core.masking import mask_document, mask_header_values
from pixgate.core.pix.documents import document_kind, make_cpf, only_document_chars
from tests.support import make_cnpj


@pytest.mark.parametrize(
    ("document", "masked"),
    [
        ("12345678909", "***.456.789-**"),
        ("123.456.789-09", "***.456.789-**"),
        ("12345678000195", "**.345.678/0001-**"),
        ("12.345.678/0001-95", "**.345.678/0001-**"),
        ("12ABC34501DE35", "**.ABC.345/01DE-**"),
        ("12.abc.345/01de-35", "**.ABC.345/01DE-**"),
        ("ABC123", "****23"),
        ("joao@example.com", "**************om"),
        ("12", "12"),
        ("", ""),
    ],
)
def test_mask_document(document: str, masked: str) -> None:
    assert mask_document(document) == masked


def test_none_stays_none() -> None:
    assert mask_document(None) is None


@given(st.text("0123456789", min_size=9, max_size=9))
def test_a_cpf_never_shows_its_first_three_or_check_digits(base: str) -> None:
    cpf = make_cpf(base)
    masked = mask_document(cpf)
    assert masked == f"***.{cpf[3:6]}.{cpf[6:9]}-**"


@given(st.text("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=12, max_size=12))
def test_a_cnpj_never_shows_its_first_two_or_check_digits(base: str) -> None:
    cnpj = make_cnpj(base)
    masked = mask_document(cnpj)
    assert masked is not None
    assert masked.startswith("**.") and masked.endswith("-**")
    assert masked.replace(".", "").replace("/", "").replace("-", "")[2:-2] == cnpj[2:12]


@given(st.text(min_size=3).filter(lambda s: document_kind(only_document_chars(s)) is None))
def test_anything_else_keeps_only_its_last_two_characters(value: str) -> None:
    masked = mask_document(value)
    assert masked == "*" * (len(value) - 2) + value[-2:]


@given(st.dictionaries(st.text(min_size=1), st.text()))
def test_a_header_value_never_shows_not_even_its_length(headers: dict[str, str]) -> None:
    assert mask_header_values(headers) == dict.fromkeys(headers, "******")
