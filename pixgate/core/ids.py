"""Identifier formats: end-to-end ids, txids and clientIds.

Random parts come from the operating system's randomness (`os.urandom`, what `secrets`
draws on): an end-to-end id or a txid that could be guessed would let anyone probe for other
accounts' transactions.
"""

from __future__ import annotations

import os
import re
import string
import uuid
from datetime import UTC, datetime
from typing import Literal

_ALNUM = string.ascii_letters + string.digits
_ISPB = re.compile(r"[0-9]{8}")
_E2E = re.compile(r"[ED][0-9]{8}([0-9]{12})[A-Za-z0-9]{11}")

TXID_PATTERN = re.compile(r"^[a-zA-Z0-9]{26,35}$")
"""The cob txid of the Central Bank's API Pix.

Match it with `fullmatch` (or use `is_txid`): `match` would let `$` accept a trailing
newline. Kept in this spelling so it can be handed to pydantic and shown in OpenAPI as is.
"""


_KEPT = 256 - 256 % len(_ALNUM)
_TO_ALNUM = bytes(ord(_ALNUM[b % len(_ALNUM)]) for b in range(_KEPT)).ljust(256, b"-")
_REJECTED = bytes(range(_KEPT, 256))
"""A random byte below `_KEPT` (248 = 4 x 62) becomes `_ALNUM[byte % 62]`, each character
equally likely; a byte above is dropped (rejection sampling), so none is favoured."""


def _random(length: int) -> str:
    """`length` uniform alphanumerics from one draw of the system's randomness, mapped by one
    C call: a draw per character was a system call per character, and a big integer cut by
    `divmod` cost a third of an end-to-end id, on every payment."""
    chars = b""
    while len(chars) < length:
        chars += os.urandom(length + 8).translate(_TO_ALNUM, _REJECTED)
    return chars[:length].decode("ascii")


def new_end_to_end_id(ispb: str, at: datetime, prefix: Literal["E", "D"] = "E") -> str:
    """`E` + 8-digit ISPB + yyyyMMddHHmm (UTC) + 11 random alphanumerics: 32 characters.

    `D` in place of `E` for refunds. `at` must carry its time zone: a naive time would
    be read as the machine's local time and put a wrong minute in the id.
    """
    if _ISPB.fullmatch(ispb) is None:
        raise ValueError("an ISPB is 8 digits")
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("the time of an end-to-end id must be timezone-aware")
    utc = at.astimezone(UTC)
    minute = f"{utc.year:04d}{utc.month:02d}{utc.day:02d}{utc.hour:02d}{utc.minute:02d}"
    return f"{prefix}{ispb}{minute}{_random(11)}"


def is_end_to_end_id(value: str) -> bool:
    """The form above, with a date-time that exists (no 13th month, no 25th hour)."""
    match = _E2E.fullmatch(value)
    if match is None:
        return False
    stamp = match.group(1)
    try:
        datetime(
            int(stamp[0:4]),
            int(stamp[4:6]),
            int(stamp[6:8]),
            int(stamp[8:10]),
            int(stamp[10:12]),
            tzinfo=UTC,
        )
    except ValueError:
        return False
    return True


def new_txid(length: int = 32) -> str:
    """A random alphanumeric txid; 26 to 35 for a cob, at most 25 inside a static BR Code."""
    if length < 1:
        raise ValueError("a txid has at least one character")
    return _random(length)


def is_txid(value: str) -> bool:
    """A cob txid: 26 to 35 ASCII letters and digits."""
    return TXID_PATTERN.fullmatch(value) is not None


def client_id_of(text: str) -> uuid.UUID | None:
    """The credential id `text` names, or None when it names none.

    `uuid.UUID` reads one id in many spellings (`urn:uuid:` and `uuid:` prefixes, braces,
    no hyphens, upper case, even non-ASCII digits), so whatever keys on a clientId (a rate
    limit above all) keys on this value, never on the text as typed: a re-spelled clientId
    is the same credential and must meet the same counters.
    """
    try:
        return uuid.UUID(text)
    except ValueError:
        return None
