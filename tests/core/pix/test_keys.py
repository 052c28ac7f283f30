"""PIX key formats per family, detection, and the canonical spelling used for lookups."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pixgate.core.pix.keys import (
    KeyType,
    SplitKeyType,
    detect_key_type,
    dict_key_type,
    is_email,
    is_valid_cash_out_key,
    is_valid_split_key,
    normalize_key,
)

EVP = "123e4567-e12b-12d1-a456-426655440000"
LONG_EMAIL = "a" * 64 + "@example.com"  # 76 characters


class TestEmail:
    @pytest.mark.parametrize(
        "value",
        [
            "a@b.co",
            "fulano.de.tal@example.com.br",
            "First.Last+tag@Sub-Domain.Example.org",
            "o'brien@example.ie",
            LONG_EMAIL,
            LONG_EMAIL + "x",  # 77, the DICT's limit
        ],
    )
    def test_valid(self, value: str) -> None:
        assert is_email(value)

    @pytest.mark.parametrize(
        "value",
        [
            "",
            "plain",
            "a@b",
            "a@b.c",
            "@example.com",
            "a@",
            "a@@example.com",
            ".a@example.com",
            "a.@example.com",
            "a..b@example.com",
            "a b@example.com",
            "a@-example.com",
            "a@example-.com",
            "a@example..com",
            "a@example.com.",
            "a@example.c0m",
            "a" * 65 + "@example.com",  # local part over 64
            "b" * 66 + "@example.com",  # 78 characters
            "a@example.com\n",
            "jo\u00e3o@example.com",
        ],
    )
    def test_invalid(self, value: str) -> None:
        assert not is_email(value)


class TestCashOutKeys:
    @pytest.mark.parametrize(
        ("key", "key_type"),
        [
            ("12345678909", KeyType.DOCUMENT),
            ("12345678900", KeyType.DOCUMENT),  # form only: check digits are the bank's
            ("11222333000181", KeyType.DOCUMENT),
            ("12ABC34501DE35", KeyType.DOCUMENT),
            ("fulano@example.com", KeyType.EMAIL),
            ("11987654321", KeyType.PHONE),
            ("1133334444", KeyType.PHONE),
            ("+5511987654321", KeyType.PHONE),  # the DICT's spelling, as the key lookup takes
            ("+551133334444", KeyType.PHONE),
            (EVP, KeyType.RANDOM),
            (EVP.replace("-", ""), KeyType.RANDOM),
            (EVP.upper(), KeyType.RANDOM),
        ],
    )
    def test_valid(self, key: str, key_type: KeyType) -> None:
        assert is_valid_cash_out_key(key, key_type)

    @pytest.mark.parametrize(
        ("key", "key_type"),
        [
            ("123.456.789-09", KeyType.DOCUMENT),
            ("1234567890", KeyType.DOCUMENT),
            ("12abc34501de35", KeyType.DOCUMENT),
            ("fulano@example.com", KeyType.DOCUMENT),
            ("fulano", KeyType.EMAIL),
            ("5511987654321", KeyType.PHONE),
            ("+55119876543", KeyType.PHONE),
            ("(11) 98765-4321", KeyType.PHONE),
            ("987654321", KeyType.PHONE),
            ("119876543210", KeyType.PHONE),
            ("11987654321\n", KeyType.PHONE),
            (EVP[:-1], KeyType.RANDOM),
            (EVP.replace("-", "")[:-1], KeyType.RANDOM),
            ("123e4567e12b-12d1-a456-426655440000", KeyType.RANDOM),
            ("g23e4567-e12b-12d1-a456-426655440000", KeyType.RANDOM),
        ],
    )
    def test_invalid(self, key: str, key_type: KeyType) -> None:
        assert not is_valid_cash_out_key(key, key_type)


class TestSplitKeys:
    @pytest.mark.parametrize(
        ("key", "key_type"),
        [
            ("52998224725", SplitKeyType.CPF),
            ("12ABC34501DE35", SplitKeyType.CNPJ),
            ("11222333000181", SplitKeyType.CNPJ),
            ("fulano@example.com", SplitKeyType.EMAIL),
            ("11987654321", SplitKeyType.PHONE),
            ("+5511987654321", SplitKeyType.PHONE),
            (EVP, SplitKeyType.RANDOM),
            (EVP.replace("-", ""), SplitKeyType.RANDOM),
        ],
    )
    def test_valid(self, key: str, key_type: SplitKeyType) -> None:
        assert is_valid_split_key(key, key_type)

    @pytest.mark.parametrize(
        ("key", "key_type"),
        [
            ("52998224724", SplitKeyType.CPF),  # wrong check digit
            ("11111111111", SplitKeyType.CPF),
            ("12ABC34501DE36", SplitKeyType.CNPJ),
            ("52998224725", SplitKeyType.CNPJ),
            ("fulano@", SplitKeyType.EMAIL),
            ("+55119876543", SplitKeyType.PHONE),  # 9 digits after +55
            ("+1 2025550123", SplitKeyType.PHONE),
            ("5511987654321", SplitKeyType.PHONE),
            ("not-a-uuid", SplitKeyType.RANDOM),
        ],
    )
    def test_invalid(self, key: str, key_type: SplitKeyType) -> None:
        assert not is_valid_split_key(key, key_type)


class TestDictKeyType:
    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            ("12345678909", "CPF"),
            ("11222333000181", "CNPJ"),
            ("12ABC34501DE35", "CNPJ"),
            ("fulano@example.com", "EMAIL"),
            ("+5511987654321", "PHONE"),
            ("+551133334444", "PHONE"),
            (EVP, "EVP"),
            (EVP.upper(), "EVP"),
        ],
    )
    def test_detected(self, key: str, expected: str) -> None:
        assert dict_key_type(key) == expected

    @pytest.mark.parametrize(
        "key",
        ["", "11987654321x", "1133334444", EVP.replace("-", ""), "+55119876543", "a@b", " "],
    )
    def test_not_a_dict_key(self, key: str) -> None:
        assert dict_key_type(key) is None

    @given(st.uuids())
    def test_every_uuid_is_an_evp(self, value: uuid.UUID) -> None:
        assert dict_key_type(str(value)) == "EVP"


class TestDetectKeyType:
    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            ("52998224725", "CPF"),
            ("11987654321", "PHONE"),  # 11 digits whose check digits are not a CPF's
            ("1133334444", "PHONE"),
            ("+5511987654321", "PHONE"),
            ("11222333000181", "CNPJ"),
            ("12ABC34501DE35", "CNPJ"),
            ("fulano@example.com", "EMAIL"),
            (EVP, "RANDOM"),
            (EVP.replace("-", ""), "RANDOM"),
        ],
    )
    def test_detected(self, key: str, expected: str) -> None:
        assert detect_key_type(key) == expected

    @pytest.mark.parametrize("key", ["", "abc", "123", "+5511", "11.987.654-321"])
    def test_unknown(self, key: str) -> None:
        assert detect_key_type(key) is None


class TestNormalizeKey:
    @given(st.uuids())
    def test_every_spelling_of_a_random_key_is_one(self, value: uuid.UUID) -> None:
        canonical = str(value)
        for spelling in (canonical, canonical.upper(), value.hex, value.hex.upper()):
            for key_type in ("RANDOM", "EVP", "random", KeyType.RANDOM):
                assert normalize_key(spelling, key_type) == canonical
        assert len(canonical) == 36

    @pytest.mark.parametrize(
        ("key", "key_type", "expected"),
        [
            ("Fulano@Example.COM", "EMAIL", "fulano@example.com"),
            (" fulano@example.com ", KeyType.EMAIL, "fulano@example.com"),
            ("11987654321", "PHONE", "+5511987654321"),
            ("+5511987654321", "PHONE", "+5511987654321"),
            ("1133334444", SplitKeyType.PHONE, "+551133334444"),
            ("12.abc.345/01de-35", "DOCUMENT", "12ABC34501DE35"),
            ("123.456.789-09", "CPF", "12345678909"),
            ("12abc34501de35", "cnpj", "12ABC34501DE35"),
        ],
    )
    def test_canonical(self, key: str, key_type: str, expected: str) -> None:
        assert normalize_key(key, key_type) == expected

    @pytest.mark.parametrize("key", ["11987654321", "+5511987654321"])
    def test_both_phone_spellings_match(self, key: str) -> None:
        detected = detect_key_type(key)
        assert detected == "PHONE"
        assert normalize_key(key, detected) == normalize_key("+5511987654321", "PHONE")

    def test_random_key_must_be_a_uuid(self) -> None:
        with pytest.raises(ValueError, match="not a random key"):
            normalize_key("{" + EVP + "}", "RANDOM")

    def test_unknown_type(self) -> None:
        with pytest.raises(ValueError, match="unknown key type"):
            normalize_key("x", "IBAN")
