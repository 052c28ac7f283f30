"""Account names: any script, emoji and accents included, but nothing that is not text.

A name is shown by the dashboard and the CLI, put in the client certificate's subject and,
transliterated, in every BR Code of the account (`brcode.fit_name`); so it is refused when
empty, too long, or holding a character that is not text: a control (a newline, a tab, NUL,
DEL), a line or paragraph separator, a lone surrogate (no database can store it) or a
bidirectional override, which can make a name read as another.
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 100
"""Characters of an account name, the most the payer names of the API take."""
_NOT_TEXT = {"Cc", "Cs", "Zl", "Zp"}
"""Unicode categories of controls, surrogates and line and paragraph separators."""
_BIDI_OVERRIDES = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class InvalidName(ValueError):
    """Why a text cannot be an account name."""


def account_name(value: str) -> str:
    """`value` without surrounding spaces, or InvalidName saying why it cannot be a name."""
    name = value.strip()
    if not name:
        raise InvalidName("must not be empty")
    if len(name) > MAX_NAME:
        raise InvalidName(f"must have at most {MAX_NAME} characters")
    for character in name:
        if unicodedata.category(character) in _NOT_TEXT or character in _BIDI_OVERRIDES:
            raise InvalidName(f"must not contain control characters (U+{ord(character):04X} found)")
    return name
