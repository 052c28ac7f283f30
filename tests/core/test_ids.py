"""End-to-end ids and txids."""

from __future__ import annotations

import itertools
import re
import string
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pixgate.core import ids
from pixgate.core.ids import TXID_PATTERN, is_end_to_end_id, is_txid, new_end_to_end_id, new_txid

BRASILIA = timezone(timedelta(hours=-3))
ALNUM = set(string.ascii_letters + string.digits)


class TestEndToEndId:
    def test_layout(self) -> None:
        e2e = new_end_to_end_id("12345678", datetime(2024, 1, 2, 10, 4, 59, tzinfo=BRASILIA))
        assert len(e2e) == 32
        assert e2e[:21] == "E12345678" + "202401021304"  # the minute in UTC
        assert set(e2e[21:]) <= ALNUM
        assert is_end_to_end_id(e2e)

    def test_refund_prefix(self) -> None:
        e2e = new_end_to_end_id("00360305", datetime(2025, 12, 31, 23, 59, tzinfo=UTC), "D")
        assert e2e.startswith("D00360305202512312359")
        assert is_end_to_end_id(e2e)

    def test_random_part_differs(self) -> None:
        at = datetime(2025, 1, 1, tzinfo=UTC)
        assert len({new_end_to_end_id("12345678", at)[21:] for _ in range(50)}) == 50

    @given(st.datetimes(timezones=st.just(UTC), min_value=datetime(2000, 1, 1)))
    def test_every_generated_id_is_valid(self, at: datetime) -> None:
        assert is_end_to_end_id(new_end_to_end_id("60701190", at))

    def test_naive_time_is_refused(self) -> None:
        with pytest.raises(ValueError, match="timezone"):
            new_end_to_end_id("12345678", datetime(2025, 1, 1))

    @pytest.mark.parametrize("ispb", ["1234567", "123456789", "1234567A", ""])
    def test_bad_ispb_is_refused(self, ispb: str) -> None:
        with pytest.raises(ValueError, match="ISPB"):
            new_end_to_end_id(ispb, datetime(2025, 1, 1, tzinfo=UTC))

    @pytest.mark.parametrize(
        "value",
        [
            "E12345678202401021304abcdefghij",  # 31 characters
            "X12345678202401021304abcdefghijk",
            "E12345678202413021304abcdefghijk",  # month 13
            "E12345678202402301304abcdefghijk",  # 30 February
            "E12345678202401022404abcdefghijk",  # hour 24
            "E12345678202401021360abcdefghijk",  # minute 60
            "E1234567A202401021304abcdefghijk",
            "E12345678202401021304abcdefghij-",
            "E12345678202401021304abcdefghijk\n",
            "E12345678202401021304abcdefghijkl",
            "e12345678202401021304abcdefghijk",
        ],
    )
    def test_invalid(self, value: str) -> None:
        assert not is_end_to_end_id(value)

    def test_valid_literal(self) -> None:
        assert is_end_to_end_id("E12345678202401021304abcdefghijk")
        assert is_end_to_end_id("D00000001202402291304ABCDEFGHIJ0")  # leap day


class TestTxid:
    def test_default_length(self) -> None:
        txid = new_txid()
        assert len(txid) == 32
        assert is_txid(txid)

    @pytest.mark.parametrize("length", [1, 25, 26, 35])
    def test_lengths(self, length: int) -> None:
        txid = new_txid(length)
        assert len(txid) == length
        assert set(txid) <= ALNUM

    def test_zero_length_is_refused(self) -> None:
        with pytest.raises(ValueError):
            new_txid(0)

    @pytest.mark.parametrize(
        ("value", "valid"),
        [
            ("a" * 26, True),
            ("Z9" * 17 + "x", True),
            ("a" * 25, False),
            ("a" * 36, False),
            ("a" * 25 + "-", False),
            ("a" * 26 + "\n", False),
            ("\u00e1" * 26, False),
        ],
    )
    def test_is_txid(self, value: str, valid: bool) -> None:
        assert is_txid(value) is valid

    def test_pattern_is_the_central_banks(self) -> None:
        assert TXID_PATTERN.pattern == "^[a-zA-Z0-9]{26,35}$"
        assert isinstance(TXID_PATTERN, re.Pattern)


class TestRandomCharacters:
    """The random part of an id: every character as likely as any other, whatever bytes the
    system's randomness gives."""

    def test_each_character_from_as_many_byte_values(self, monkeypatch: pytest.MonkeyPatch) -> None:
        every_byte = itertools.cycle(range(256))
        monkeypatch.setattr(ids.os, "urandom", lambda n: bytes(itertools.islice(every_byte, n)))
        counts = Counter(new_txid(248))  # one draw of 256 bytes: each value once
        assert set(counts) == ALNUM
        assert set(counts.values()) == {4}  # 248 byte values kept, 4 per character

    def test_bytes_that_would_favour_some_characters_are_drawn_again(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        draws: list[int] = []

        def urandom(n: int) -> bytes:
            draws.append(n)
            return bytes([248 + len(draws) % 8] * n) if len(draws) == 1 else bytes([61] * n)

        monkeypatch.setattr(ids.os, "urandom", urandom)
        assert new_txid(11) == "9" * 11
        assert len(draws) == 2  # the first draw was all above the last kept byte value
