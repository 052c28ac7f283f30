"""What the DICT (the Central Bank's directory of PIX keys) answers about a key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class KeyHolder:
    """What the DICT knows of a PIX key's owner and account."""

    key: str
    key_type: str
    name: str
    document: str
    ispb: str
    bank_name: str
    bank_code: str
    branch: str
    account_number: str
    status: Literal["ACTIVE", "BLOCKED", "CLOSED"] = "ACTIVE"
