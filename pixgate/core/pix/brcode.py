"""BR Code: the EMV QR Code (MPM) payload of PIX, per the Central Bank's BR Code manual.

A payload is a flat list of TLV fields, each a 2-digit ID, a 2-digit decimal length and the
value, in this order:

- `00` payload format `01`; `01` point of initiation (`12`: dynamic, single use; `11`:
  static, reusable; absent on most static codes);
- `26` PIX merchant account template: `00` GUI `br.gov.bcb.pix`, then either `01` the PIX
  key (static code) with optional `02` description, or `25` the location URL without its
  scheme (dynamic code, whose payer's bank fetches the charge there);
- `52` merchant category `0000`, `53` currency `986`, `54` amount (only when fixed),
  `58` country `BR`, `59` merchant name (max 25), `60` city (max 15), `61` postal code;
- `62` additional data with `05` txid (`***` when none, and always on dynamic codes);
- `63` CRC16/CCITT-FALSE of everything before its value, including `6304`, as 4 hex digits.

`encode` writes only what the manual allows, in printable ASCII so that a length counts
characters and bytes alike. `decode` reads codes that other banks made (QR cash-out), so it
is strict about structure (TLV, format, CRC, required fields) but takes any value length the
TLV allows and ignores fields it does not use, such as other schemes' templates.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from pixgate.core.money import MAX_AMOUNT, format_amount

GUI = "br.gov.bcb.pix"
NAME_MAX = 25
CITY_MAX = 15
TXID_MAX = 25
KEY_MAX = 77
URL_MAX = 77
NO_TXID = "***"
"""The txid of a code that has none: every dynamic code, and static codes without one."""
NAME_FALLBACK = "NAO INFORMADO"
"""The merchant name (59) of an account whose name has no character of printable ASCII once
its accents are gone (`東京商店`): Portuguese for "not informed"."""

_MAX_VALUE = 99  # two decimal digits of length
_HEAD = re.compile(r"[0-9]{4}")
_CRC = re.compile(r"[0-9A-Fa-f]{4}")
_AMOUNT = re.compile(r"([0-9]{1,10})(?:\.([0-9]{1,2}))?")
_PRINTABLE = re.compile(r"[ -~]+")
_TXID = re.compile(rf"[A-Za-z0-9]{{1,{TXID_MAX}}}")
_MCC = re.compile(r"[0-9]{4}")
_CURRENCY = re.compile(r"[0-9]{3}")
_COUNTRY = re.compile(r"[A-Z]{2}")
_PIX_TEMPLATES = [f"{i:02d}" for i in range(26, 52)]  # EMV merchant account templates
_POINTS: dict[str | None, Literal["11", "12"] | None] = {None: None, "11": "11", "12": "12"}


class InvalidBrCode(ValueError):
    """A payload that is not a valid PIX BR Code, or values no valid BR Code can carry."""


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = (crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, no final xor).

    The BR Code checksum: computed over the payload up to and including `6304` and written
    as 4 uppercase hex digits.
    """
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ byte]
    return crc


def transliterate(value: str) -> str:
    """Accented text as printable ASCII: `São Paulo` -> `Sao Paulo`.

    NFKD splits a letter from its accents (and `ﬁ` into `fi`); then everything outside
    printable ASCII goes, combining marks included. Banks' apps read BR Codes as ASCII,
    and a multi-byte character would make a field's length ambiguous (characters or bytes).
    """
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if " " <= c <= "~")


@dataclass(frozen=True)
class BrCode:
    """The fields of a PIX BR Code; exactly one of `pix_key` and `location_url` is set."""

    merchant_name: str
    merchant_city: str
    amount_cents: int | None = None
    pix_key: str | None = None
    """Static code: the receiver's key (26/01)."""
    location_url: str | None = None
    """Dynamic code: where the charge is fetched (26/25), without `https://`."""
    txid: str = NO_TXID
    description: str | None = None
    """Static code: text for the payer (26/02)."""
    point_of_initiation: Literal["11", "12"] | None = None
    mcc: str = "0000"
    currency: str = "986"
    country: str = "BR"
    postal_code: str | None = None


def _tlv(tag: str, value: str) -> str:
    if not 1 <= len(value) <= _MAX_VALUE:
        raise InvalidBrCode(f"field {tag} must have 1 to {_MAX_VALUE} characters")
    return f"{tag}{len(value):02d}{value}"


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise InvalidBrCode(message)


def _text(value: str, limit: int, what: str) -> str:
    _require(
        len(value) <= limit and _PRINTABLE.fullmatch(value) is not None,
        f"{what} must be 1 to {limit} printable ASCII characters",
    )
    return value


def _check(code: BrCode) -> None:
    _require(
        (code.pix_key is None) != (code.location_url is None),
        "a BR Code has either a PIX key or a location URL",
    )
    _require(
        code.location_url is None or "://" not in code.location_url,
        "the location URL goes without its scheme",
    )
    _require(
        code.amount_cents is None or 1 <= code.amount_cents <= MAX_AMOUNT,
        "the amount must be from 0.01 to 9999999999.99",
    )
    _require(code.txid == NO_TXID or _TXID.fullmatch(code.txid) is not None, "invalid txid")
    _require(code.point_of_initiation in _POINTS, "invalid point of initiation")
    _require(
        code.description is None or code.pix_key is not None,
        "a description goes only in a static code",
    )
    _require(_MCC.fullmatch(code.mcc) is not None, "the MCC is 4 digits")
    _require(_CURRENCY.fullmatch(code.currency) is not None, "the currency is 3 digits")
    _require(_COUNTRY.fullmatch(code.country) is not None, "the country is 2 capital letters")


def encode(code: BrCode) -> str:
    """The payload (copy-and-paste string) of a BR Code, CRC included.

    Raises `InvalidBrCode` for values the manual does not allow rather than adjusting them,
    so that `decode(encode(code)) == code` always holds; `static` and `dynamic` fit free
    text to the limits first.
    """
    _check(code)
    account = _tlv("00", GUI)
    if code.pix_key is not None:
        account += _tlv("01", _text(code.pix_key, KEY_MAX, "the PIX key"))
    if code.description is not None:
        account += _tlv("02", _text(code.description, _MAX_VALUE, "the description"))
    if code.location_url is not None:
        account += _tlv("25", _text(code.location_url, URL_MAX, "the location URL"))
    payload = _tlv("00", "01")
    if code.point_of_initiation is not None:
        payload += _tlv("01", code.point_of_initiation)
    payload += _tlv("26", account) + _tlv("52", code.mcc) + _tlv("53", code.currency)
    if code.amount_cents is not None:
        payload += _tlv("54", format_amount(code.amount_cents))
    payload += _tlv("58", code.country)
    payload += _tlv("59", _text(code.merchant_name, NAME_MAX, "the merchant name"))
    payload += _tlv("60", _text(code.merchant_city, CITY_MAX, "the merchant city"))
    if code.postal_code is not None:
        payload += _tlv("61", _text(code.postal_code, _MAX_VALUE, "the postal code"))
    payload += _tlv("62", _tlv("05", code.txid)) + "6304"
    return f"{payload}{crc16_ccitt_false(payload.encode('ascii')):04X}"


def fit(value: str, limit: int) -> str:
    """Free text as a field of at most `limit` characters takes it: words (split at any
    space, a tab included) transliterated, one space between them, cut. Empty when nothing of
    it is printable ASCII."""
    words = transliterate(" ".join(value.split())).split()
    return " ".join(words)[:limit].rstrip()


def fit_name(name: str) -> str:
    """An account's name as field 59 carries it; `NAME_FALLBACK` when none of it is left, so
    a name in any script still makes a code."""
    return fit(name, NAME_MAX) or NAME_FALLBACK


def _city(city: str) -> str:
    fitted = fit(city, CITY_MAX)
    _require(bool(fitted), "the merchant city has no printable character")
    return fitted


def dynamic(
    location_url: str, merchant_name: str, merchant_city: str, amount_cents: int | None
) -> BrCode:
    """A dynamic, single-use code pointing at a charge's location.

    `location_url` may carry `https://`, which is dropped (the manual's form has none).
    The name and city are fitted to 25 and 15 characters (`fit_name`, `fit`).
    """
    return BrCode(
        merchant_name=fit_name(merchant_name),
        merchant_city=_city(merchant_city),
        amount_cents=amount_cents,
        location_url=location_url.removeprefix("https://"),
        txid=NO_TXID,
        point_of_initiation="12",
    )


def static(
    pix_key: str,
    merchant_name: str,
    merchant_city: str,
    amount_cents: int | None = None,
    txid: str = NO_TXID,
    description: str | None = None,
) -> BrCode:
    """A static code paying a PIX key, reusable, with an optional fixed amount.

    The name and city are fitted to 25 and 15 characters (`fit_name`, `fit`). The
    description is fitted to what the PIX template has room for (it is informative only);
    one with nothing printable left is dropped.
    """
    room = _MAX_VALUE - len(_tlv("00", GUI)) - len(_tlv("01", pix_key)) - 4
    text = fit(description, max(room, 0)) if description else ""
    return BrCode(
        merchant_name=fit_name(merchant_name),
        merchant_city=_city(merchant_city),
        amount_cents=amount_cents,
        pix_key=pix_key,
        txid=txid,
        description=text or None,
    )


def _fields(text: str, where: str) -> dict[str, str]:
    """Strict TLV parse: every byte belongs to a field, no field is empty or repeated."""
    fields: dict[str, str] = {}
    at = 0
    while at < len(text):
        head = text[at : at + 4]
        _require(_HEAD.fullmatch(head) is not None, f"{where}: malformed field at {at}")
        tag, length = head[:2], int(head[2:])
        value = text[at + 4 : at + 4 + length]
        _require(length > 0 and len(value) == length, f"{where}: field {tag} is cut short")
        _require(tag not in fields, f"{where}: field {tag} is repeated")
        fields[tag] = value
        at += 4 + length
    return fields


def _pix_account(fields: dict[str, str]) -> dict[str, str]:
    accounts = []
    for tag in _PIX_TEMPLATES:
        if tag in fields:
            account = _fields(fields[tag], f"field {tag}")
            if account.get("00", "").lower() == GUI:
                accounts.append(account)
    _require(len(accounts) == 1, f"the code needs exactly one {GUI} template")
    return accounts[0]


def _amount(value: str) -> int:
    match = _AMOUNT.fullmatch(value)
    if match is None:
        raise InvalidBrCode(f"invalid amount {value!r}")
    whole, fraction = match.groups()
    cents = int(whole) * 100 + int((fraction or "").ljust(2, "0"))
    _require(cents > 0, "a fixed amount of zero cannot be paid")
    return cents


def decode(payload: str) -> BrCode:
    """The fields of a PIX BR Code payload; `InvalidBrCode` says what is wrong.

    The CRC is checked over the UTF-8 bytes (a code with accents is read the way its
    maker most likely wrote it) and accepted in either hex case.
    """
    _require(payload.startswith("000201"), "a BR Code starts with 000201")
    fields = _fields(payload, "payload")
    _require(list(fields)[-1] == "63", "the CRC (field 63) must come last")
    crc = fields["63"]
    _require(_CRC.fullmatch(crc) is not None, "the CRC is 4 hex digits")
    try:
        signed = payload[:-4].encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate, as a JSON string may carry
        raise InvalidBrCode("the payload is not valid text") from exc
    expected = crc16_ccitt_false(signed)
    _require(int(crc, 16) == expected, f"CRC mismatch: expected {expected:04X}")
    for tag in ("52", "53", "58", "59", "60", "62"):
        _require(tag in fields, f"field {tag} is required")
    account = _pix_account(fields)
    _require(("01" in account) != ("25" in account), "a PIX template has a key or a URL")
    point = fields.get("01")
    _require(point in _POINTS, "the point of initiation is 11 or 12")
    additional = _fields(fields["62"], "field 62")
    _require("05" in additional, "field 62 needs a txid (05)")
    return BrCode(
        merchant_name=fields["59"],
        merchant_city=fields["60"],
        amount_cents=_amount(fields["54"]) if "54" in fields else None,
        pix_key=account.get("01"),
        location_url=account.get("25"),
        txid=additional["05"],
        description=account.get("02"),
        point_of_initiation=_POINTS[point],
        mcc=fields["52"],
        currency=fields["53"],
        country=fields["58"],
        postal_code=fields.get("61"),
    )
