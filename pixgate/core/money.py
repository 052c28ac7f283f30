"""Money: integer cents in storage, `Decimal` in code and on the wire, never a binary float.

An amount with more than two decimal places is refused, never rounded: silently rounding
what a client sent would move a different sum than the one they asked for. Shares of an
amount (fees, splits) are computed with exact fractions, so no precision setting of the
`decimal` context can change a result.

Every amount a client sends (a payment, a charge, a refund, a FIXED split) has one range,
`MIN_AMOUNT` to `MAX_AMOUNT`, checked by `amount_cents` where the request is parsed; a sum
the gateway keeps (a balance, a day's outgoing total) may grow up to `MAX_CENTS`. Answers
carry amounts as `Decimal`s, which `json_number` writes as exact JSON numbers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

import orjson

# one class for every bad amount: re-exported, so the callers of to_cents catch it from here
from pixgate.core.errors import InvalidAmount as InvalidAmount

CENT = Decimal("0.01")
_CENTS = Context(prec=28, rounding=ROUND_HALF_EVEN, traps=[InvalidOperation])
"""The context of the cents conversion, whatever the caller's: 28 digits hold any cents."""
MAX_CENTS = 2**63 - 1
"""Sums are stored as PostgreSQL `bigint` cents; anything larger cannot be kept."""
MIN_AMOUNT = 1
MAX_AMOUNT = 999_999_999_999
"""The largest amount of one operation, in cents: 9999999999.99, the most the BR Code's amount
field (ID 54, at most 13 characters) can carry, so every charge can be paid by a code."""
AMOUNT_RANGE = "must be from 0.01 to 9999999999.99"


@dataclass(frozen=True, slots=True)
class Spelling:
    """How an amount sent as a string must be written: the pattern OpenAPI publishes (ASCII
    digits only) and the reason a string that breaks it is refused."""

    pattern: str
    reason: str
    text: re.Pattern[str]

    @classmethod
    def of(cls, pattern: str, example: str) -> Spelling:
        """`$` alone would also take a final newline in Python: the pattern is compiled for
        `fullmatch`, without its anchors."""
        reason = f"must be written with the digits 0-9 and a point, as in {example}"
        return cls(pattern, reason, re.compile(pattern.removeprefix("^").removesuffix("$")))


AMOUNT = Spelling.of(r"^[0-9]{1,10}(\.[0-9]{1,2})?$", "10 or 10.50 (at most 2 decimals)")
"""An amount as the public family takes it as a string."""
CENTRAL_BANK_AMOUNT = Spelling.of(r"^[0-9]{1,10}\.[0-9]{2}$", "10.50 (always 2 decimals)")
"""An amount as the Central Bank's API writes it (cob, devolucao)."""
SPLIT_VALUE = Spelling.of(r"^[0-9]{1,10}(\.[0-9]{1,4})?$", "10 or 12.5 (at most 4 decimals)")
"""A split's value: a FIXED amount or a PERCENTAGE."""

SplitType = Literal["FIXED", "PERCENTAGE"]


def to_cents(value: Decimal | int | float | str) -> int:
    """Exact conversion of a BRL amount to integer cents.

    Floats go through their shortest `repr`, so `0.1` means the 0.10 its writer meant rather
    than the binary fraction it is stored as. Booleans are refused although Python counts
    them as ints, because `true` in a JSON body is never an amount. Negative amounts pass:
    the minimum depends on the caller (a value, a fee, a balance adjustment).
    """
    if isinstance(value, bool):
        raise InvalidAmount("a boolean is not an amount")
    try:
        amount = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, TypeError, ValueError) as exc:
        raise InvalidAmount(f"{value!r} is not a number") from exc
    if not amount.is_finite():
        raise InvalidAmount("the amount must be finite")
    if amount.is_zero():
        return 0
    # `adjusted()` is the exponent of the leading digit: checking it first keeps a value such
    # as 1E+999999 from ever being expanded. Then the value has at most 19 digits before the
    # point, so its cents fit the context's 28 digits: quantizing is exact or rounds, and
    # comparing tells which, without expanding the coefficient of a value written with a
    # million decimals into an integer.
    if amount.adjusted() > 18:
        raise InvalidAmount("the amount is too large")
    in_cents = amount.quantize(CENT, context=_CENTS)
    if in_cents != amount:
        raise InvalidAmount("the amount has more than 2 decimal places")
    cents = int(in_cents.scaleb(2, context=_CENTS))
    if abs(cents) > MAX_CENTS:
        raise InvalidAmount("the amount is too large")
    return cents


def to_decimal(cents: int) -> Decimal:
    """Cents as a `Decimal` with exactly two places, the form code does arithmetic in and
    answers carry (exact: a bigint has 19 digits, the context keeps 28)."""
    return Decimal(cents).scaleb(-2)


def format_amount(cents: int) -> str:
    """`1234.50`: the string form of the Central-Bank family, V2 payloads and BR Codes."""
    return f"{to_decimal(cents):.2f}"


_MORE_DIGITS_THAN_THE_RANGE = re.compile(r"[0-9]{11,}(\.[0-9]*)?")
"""A string written with plain digits whose only fault is its size: its reason is the range."""
_LOWEST = Decimal(MIN_AMOUNT) / 100
_HIGHEST = Decimal(MAX_AMOUNT) / 100


def client_decimal(value: object, spelling: Spelling) -> Decimal:
    """A number a client sent, as the `Decimal` it is, or InvalidAmount saying why not.

    JSON numbers arrive as `int` or `Decimal` (a float only from Python callers); a string
    must be written as `spelling` says, so `1e2`, ` 10`, `1_000`, `.5` and digits of other scripts
    (`１０`, `١٠`), which `Decimal` would all take, are refused. The value is never
    repeated in the reason: it may be a megabyte long.
    """
    if isinstance(value, str):
        if spelling.text.fullmatch(value) is None:
            too_long = _MORE_DIGITS_THAN_THE_RANGE.fullmatch(value) is not None
            raise InvalidAmount(AMOUNT_RANGE if too_long else spelling.reason)
        return Decimal(value)
    if isinstance(value, bool) or not isinstance(value, int | Decimal | float):
        raise InvalidAmount("must be a number, or a string of digits")
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not number.is_finite():
        raise InvalidAmount("must be a finite number")
    return number


def _in_range(value: object, spelling: Spelling) -> Decimal:
    """The value from 0.01 to 9999999999.99, compared exactly before anything else is done
    with it, so `1e400` costs no more than `1`."""
    number = client_decimal(value, spelling)
    if not _LOWEST <= number <= _HIGHEST:
        raise InvalidAmount(AMOUNT_RANGE)
    return number


def amount_cents(value: object, spelling: Spelling = AMOUNT) -> int:
    """The cents of one operation's amount as a client sent it: from `MIN_AMOUNT` to
    `MAX_AMOUNT`, at most 2 decimals, a string written as `spelling` says; else
    InvalidAmount."""
    return to_cents(_in_range(value, spelling))


SPLIT_PLACES = Decimal("0.0001")
"""A split's value has at most 4 decimals (a PERCENTAGE; a FIXED one is an amount, 2), the
precision of the column that keeps it."""


def split_value(value: object) -> Decimal:
    """A split's value as a client sent it, in the amounts' range with at most 4 decimals,
    written with exactly 4 (a value written with a million zeros is kept as 1.0000)."""
    number = _in_range(value, SPLIT_VALUE)
    kept = number.quantize(SPLIT_PLACES, context=_CENTS)
    if kept != number:
        raise InvalidAmount("a split's value has at most 4 decimal places")
    return kept


def json_number(value: object) -> orjson.Fragment:
    """orjson's `default=` for what the gateway writes (answers, webhooks, jsonb): a
    `Decimal` amount as the exact JSON number it is (`31352878155977850.07`, never a float's
    `3.135287815597785e+16`)."""
    if isinstance(value, Decimal) and value.is_finite():
        return orjson.Fragment(f"{value:f}")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _exact_share(gross_cents: int, percent: Decimal) -> Fraction:
    """`percent`% of `gross_cents`, unrounded."""
    return Fraction(gross_cents) * Fraction(percent) / 100


def percent_of(gross_cents: int, percent: Decimal) -> int:
    """`percent`% of an amount in cents, rounded half-up to the cent.

    Half-up is the rule of a single charge (fees): half a cent is charged. Several shares
    of one amount are not rounded one by one; `allocate_splits` shares them out.
    """
    if not percent.is_finite():
        raise InvalidAmount("the percentage must be finite")
    # the exact share is n / d; in integers, as every fee of a payment is one (a Fraction
    # costs twenty times as much)
    numerator, denominator = percent.as_integer_ratio()
    n, d = gross_cents * numerator, 100 * denominator
    half_up = (2 * abs(n) + d) // (2 * d)  # ties away from zero, like ROUND_HALF_UP
    return half_up if n >= 0 else -half_up


def fee_for(amount_cents: int, fixed_cents: int, percent: Decimal) -> int:
    """The fee of an operation: the fixed part plus `percent`% of the amount, half-up."""
    return fixed_cents + percent_of(amount_cents, percent)


def allocate_splits(gross_cents: int, splits: list[tuple[SplitType, Decimal]]) -> list[int]:
    """Each split's share of a received amount, in cents, in the order given.

    - FIXED: the stated BRL value, exactly (more than 2 decimal places is refused).
    - PERCENTAGE: that percent of the gross amount (10 means 10%), by the largest-remainder
      (Hamilton) method: every exact share is floored to the cent; then the cents lost to
      flooring, up to the round-half-even total of the exact percentage shares, go one
      each to the percentage splits with the largest fractional remainders (the earlier
      split first on a tie).

    So the percentage shares add up to the rounded exact total, no share is more than a
    cent from its exact value, nothing is created or lost (`gross - sum(shares)` is what
    stays with the account), and three splits of 33.33% of 100.00 get 33.33 each.
    Raises `InvalidAmount` for a negative or non-finite value, or when the shares add up
    to more than the gross amount.
    """
    if gross_cents < 0:
        raise InvalidAmount("the amount must not be negative")
    exact: list[Fraction] = []
    for kind, value in splits:
        if not value.is_finite() or value < 0:
            raise InvalidAmount("a split value must be a non-negative number")
        exact.append(
            _exact_share(gross_cents, value) if kind == "PERCENTAGE" else Fraction(to_cents(value))
        )
    shares = [math.floor(e) for e in exact]
    percentage = [i for i, (kind, _) in enumerate(splits) if kind == "PERCENTAGE"]
    target = round(sum((exact[i] for i in percentage), Fraction(0)))  # half-even
    leftover = target - sum(shares[i] for i in percentage)
    by_remainder = sorted(percentage, key=lambda i: (shares[i] - exact[i], i))
    for i in by_remainder[:leftover]:
        shares[i] += 1
    if sum(shares) > gross_cents:
        raise InvalidAmount("the splits add up to more than the amount")
    return shares
