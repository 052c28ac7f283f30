"""Money: integer cents in storage, Decimal in code, never a binary float (D4).

A value with more than two decimal places is refused, never rounded.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Literal

CENT = Decimal("0.01")
SplitType = Literal["FIXED", "PERCENTAGE"]


class InvalidAmount(ValueError):
    """Not a finite amount with at most two decimal places."""


def to_cents(value: Decimal | int | float | str) -> int:
    """Exact conversion of a BRL amount to cents; floats go through their shortest repr."""
    if isinstance(value, bool):
        raise InvalidAmount("a boolean is not an amount")
    try:
        amount = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, ValueError) as exc:
        raise InvalidAmount(f"{value!r} is not a number") from exc
    if not amount.is_finite():
        raise InvalidAmount("the amount must be finite")
    cents = amount * 100
    if cents != cents.to_integral_value():
        raise InvalidAmount("the amount has more than 2 decimal places")
    return int(cents)


def to_decimal(cents: int) -> Decimal:
    return (Decimal(cents) / 100).quantize(CENT)


def format_amount(cents: int) -> str:
    """`1234.50`: the string form of the Central-Bank family and v2 payloads."""
    return f"{to_decimal(cents):.2f}"


def to_number(cents: int) -> float:
    """A JSON number for the public family; cents/100 is exact to 2 decimals in a double."""
    return cents / 100


def percent_of(gross_cents: int, percent: Decimal) -> Decimal:
    """The exact (unrounded) share in cents."""
    return Decimal(gross_cents) * percent / 100


def fee_for(amount_cents: int, fixed_cents: int, percent: Decimal) -> int:
    """Fixed part plus a percentage of the amount, the percentage rounded half-up to the cent."""
    variable = percent_of(amount_cents, percent).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return fixed_cents + int(variable)


def allocate_splits(gross_cents: int, splits: list[tuple[SplitType, Decimal]]) -> list[int]:
    """Each split's share in cents; what is left (gross - sum) stays with the account.

    FIXED is the stated amount. PERCENTAGE is of the gross amount, by the largest-remainder
    method: every share is floored to the cent, then the cents lost to flooring
    (the rounded exact total of the percentages minus the floored sum) go one each to the
    percentage splits with the largest fractional remainders, earlier splits first on
    ties. So no cent is created or lost, three splits of 33.33% of 100.00 give 33.33 each,
    and the total never exceeds gross.
    """
    exact = [
        percent_of(gross_cents, value) if kind == "PERCENTAGE" else Decimal(to_cents(value))
        for kind, value in splits
    ]
    shares = [int(e) for e in exact]  # floor: values are non-negative
    percentage = [i for i, (kind, _) in enumerate(splits) if kind == "PERCENTAGE"]
    target = int(sum((exact[i] for i in percentage), Decimal(0)).quantize(Decimal(1)))
    leftover = target - sum(shares[i] for i in percentage)
    by_remainder = sorted(percentage, key=lambda i: (-(exact[i] - shares[i]), i))
    for i in by_remainder[:leftover]:
        shares[i] += 1
    if sum(shares) > gross_cents:
        raise InvalidAmount("the splits add up to more than the amount")
    return shares
