"""Account names: any script is a name; what is not text is not."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pixgate.core.names import MAX_NAME, InvalidName, account_name

TEXT = st.characters(
    exclude_categories=("Cc", "Cs", "Zl", "Zp"),
    exclude_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
)


@given(st.text(TEXT, min_size=1, max_size=MAX_NAME).filter(str.strip))
def test_any_text_is_a_name(text: str) -> None:
    assert account_name(text) == text.strip()


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "empty"),
        (" \u3000\t", "empty"),
        ("a" * (MAX_NAME + 1), "at most 100"),
        ("Loja\x00", "U+0000"),
        ("Loja\r\nX", "U+000D"),
        ("Loja\x85X", "U+0085"),
        ("Loja\u2029X", "U+2029"),
        ("Loja\ud800", "U+D800"),
        ("Loja \u2066X", "U+2066"),
    ],
)
def test_what_is_not_a_name(value: str, reason: str) -> None:
    with pytest.raises(InvalidName, match=re.escape(reason)):
        account_name(value)
