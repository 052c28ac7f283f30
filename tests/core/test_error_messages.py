"""An error's messages are always a list: one sentence, or one `field: reason` line per field;
whoever shows them reads `messages` (or `text`, the one-line form) and never asks which."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pixgate.core.errors import InsufficientBalance, NotFound, PixgateError, ValidationFailed

PACKAGE = Path(__file__).resolve().parents[2] / "pixgate"


@pytest.mark.parametrize(
    ("error", "messages", "per_field"),
    [
        (NotFound("charge 7 not found"), ["charge 7 not found"], False),
        (InsufficientBalance(), [InsufficientBalance.user_message], False),
        (
            ValidationFailed(["value: too big", "payer: required"]),
            ["value: too big", "payer: required"],
            True,
        ),
        (ValidationFailed(("a: b",)), ["a: b"], True),
    ],
)
def test_messages_are_a_list(error: PixgateError, messages: list[str], per_field: bool) -> None:
    assert error.messages == messages
    assert error.per_field is per_field
    assert error.text == str(error) == "; ".join(messages)


def test_no_module_asks_whether_a_message_is_a_list() -> None:
    asking = re.compile(r"isinstance\([^)]*\.message\b")
    found = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if asking.search(path.read_text())
    ]
    assert found == []
