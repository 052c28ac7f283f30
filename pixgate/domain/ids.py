"""Identifier formats: end-to-end ids (D8), refund ids, cob txids."""

from __future__ import annotations

import re
import secrets
import string
from datetime import UTC, datetime
from typing import Literal

_ALNUM = string.ascii_letters + string.digits
_E2E = re.compile(r"^[ED](\d{8})(\d{12})([A-Za-z0-9]{11})$")
TXID_PATTERN = re.compile(r"^[a-zA-Z0-9]{26,35}$")


def _random(length: int) -> str:
    return "".join(secrets.choice(_ALNUM) for _ in range(length))


def new_end_to_end_id(ispb: str, at: datetime, prefix: Literal["E", "D"] = "E") -> str:
    """`E` + ISPB + yyyyMMddHHmm (UTC) + 11 random characters: 32 in all. `D` for refunds."""
    return f"{prefix}{ispb}{at.astimezone(UTC):%Y%m%d%H%M}{_random(11)}"


def is_end_to_end_id(value: str) -> bool:
    match = _E2E.match(value)
    if not match:
        return False
    try:
        datetime.strptime(match.group(2), "%Y%m%d%H%M")
    except ValueError:
        return False
    return True


def new_txid(length: int = 32) -> str:
    return _random(length)


def is_txid(value: str) -> bool:
    return bool(TXID_PATTERN.match(value))
