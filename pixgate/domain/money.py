"""Money: integer cents in storage, `Decimal` in code, never a binary float.

An amount with more than two decimal places is refused, never rounded: silently rounding
what a client sent would move a different sum than the one they asked for. Shares of an
amount (fees, splits) are computed with exact fractions, so no precision setting of the
`decimal` context can change a result.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

# one class for every bad amount: re-exported, so the callers of to_cents catch it from here
from pixgate.domain.errors import InvalidAmount as InvalidAmount

CENT = Decimal("0.01")
MAX_CENTS = 2**63 - 1
"""Amounts are stored as PostgreSQL `bigint` cents; anything larger cannot be kept."""

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
    # as 1E+999999 from ever being expanded into a huge integer.
    if amount.adjusted() > 18:
        raise InvalidAmount("the amount is too large")
    sign, digits, exponent = amount.as_tuple()
    assert isinstance(exponent, int)  # finite values have an integer exponent
    coefficient = int("".join(map(str, digits)))
    shift = exponent + 2  # the power of ten that turns the coefficient into cents
    scale: int = 10 ** abs(shift)
    if shift >= 0:
        cents = coefficient * scale
    else:
        cents, rest = divmod(coefficient, scale)
        if rest:
            raise InvalidAmount("the amount has more than 2 decimal places")
    if cents > MAX_CENTS:
        raise InvalidAmount("the amount is too large")
    return -cents if sign else cents


def to_decimal(cents: int) -> Decimal:
    """Cents as a `Decimal` with exactly two places, the form code does arithmetic in."""
    return (Decimal(cents) / 100).quantize(CENT)


def format_amount(cents: int) -> str:
    """`1234.50`: the string form of the Central-Bank family, V2 payloads and BR Codes."""
    return f"{to_decimal(cents):.2f}"


def to_number(cents: int) -> float:
    """A JSON number for the public family.

    The nearest double to cents/100 prints back as the same two-decimal value, so the
    client reads exactly the amount stored.
    """
    return cents / 100


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
    share = _exact_share(gross_cents, percent)
    half_up = math.floor(abs(share) + Fraction(1, 2))  # ties away from zero, like ROUND_HALF_UP
    return half_up if share >= 0 else -half_up


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
