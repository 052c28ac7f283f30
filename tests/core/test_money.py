"""Money rules: exact cents, no rounding of input, shares that never lose a cent."""

from __future__ import annotations

import math
import re
from decimal import ROUND_DOWN, Decimal, localcontext
from fractions import Fraction

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pixgate.core.money import (
    AMOUNT,
    AMOUNT_RANGE,
    CENTRAL_BANK_AMOUNT,
    MAX_AMOUNT,
    MAX_CENTS,
    SPLIT_VALUE,
    InvalidAmount,
    SplitType,
    allocate_splits,
    amount_cents,
    fee_for,
    format_amount,
    json_number,
    percent_of,
    split_value,
    to_cents,
    to_decimal,
)

cents = st.integers(min_value=-(10**15), max_value=10**15)


class TestToCents:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("10", 1000),
            ("10.5", 1050),
            ("10.50", 1050),
            ("0.01", 1),
            ("1.000", 100),  # exact: trailing zeros are not extra precision
            ("1e2", 10000),
            ("-5.25", -525),
            (" 7.10 ", 710),
            (10, 1000),
            (0, 0),
            (Decimal("1234.56"), 123456),
            (Decimal("-0"), 0),
            (0.1, 10),
            (1.1, 110),
            (19.99, 1999),
            (0.07, 7),
            (1234567.89, 123456789),
        ],
    )
    def test_exact_conversion(self, value: Decimal | int | float | str, expected: int) -> None:
        result = to_cents(value)
        assert result == expected
        assert type(result) is int

    @pytest.mark.parametrize(
        "value",
        ["0.001", "1.005", 0.001, 1.005, Decimal("0.015"), "1E-3"],
    )
    def test_refuses_more_than_two_places(self, value: Decimal | float | str) -> None:
        with pytest.raises(InvalidAmount, match="2 decimal places"):
            to_cents(value)

    @pytest.mark.parametrize(
        "value",
        ["NaN", "sNaN", "inf", "-Infinity", float("nan"), float("inf"), Decimal("NaN")],
    )
    def test_refuses_non_finite(self, value: Decimal | float | str) -> None:
        with pytest.raises(InvalidAmount):
            to_cents(value)

    @pytest.mark.parametrize("value", [True, False])
    def test_refuses_booleans(self, value: bool) -> None:
        with pytest.raises(InvalidAmount, match="boolean"):
            to_cents(value)

    @pytest.mark.parametrize("value", ["", "abc", "1,50", "R$ 10"])
    def test_refuses_non_numbers(self, value: str) -> None:
        with pytest.raises(InvalidAmount, match="not a number"):
            to_cents(value)

    @pytest.mark.parametrize("value", ["1E+999999", "1e20", str(MAX_CENTS)])
    def test_refuses_what_a_bigint_cannot_hold(self, value: str) -> None:
        with pytest.raises(InvalidAmount, match="too large"):
            to_cents(value)

    def test_the_callers_context_changes_nothing(self) -> None:
        with localcontext() as context:
            context.prec = 3
            assert to_cents("12345678901234567.89") == 1234567890123456789

    def test_a_million_decimals_are_not_expanded(self) -> None:
        assert to_cents(Decimal("1." + "0" * 1_000_000)) == 100
        with pytest.raises(InvalidAmount, match="2 decimal places"):
            to_cents(Decimal("1." + "0" * 1_000_000 + "1"))

    def test_largest_storable_amount(self) -> None:
        assert to_cents(to_decimal(MAX_CENTS)) == MAX_CENTS

    @given(cents)
    def test_round_trips_every_representation(self, value: int) -> None:
        assert to_cents(to_decimal(value)) == value
        assert to_cents(format_amount(value)) == value

    @given(cents, st.integers(min_value=1, max_value=9))
    def test_a_third_decimal_is_always_refused(self, value: int, digit: int) -> None:
        with pytest.raises(InvalidAmount):
            to_cents(f"{format_amount(value)}{digit}")


class TestClientAmounts:
    """One range and one spelling for every amount a client sends."""

    @given(st.integers(1, MAX_AMOUNT))
    def test_every_amount_in_range_is_taken_in_every_form(self, cents: int) -> None:
        for value in (format_amount(cents), to_decimal(cents), cents / 100):
            assert amount_cents(value) == cents
        assert amount_cents(format_amount(cents), CENTRAL_BANK_AMOUNT) == cents
        if cents % 100 == 0:
            assert amount_cents(cents // 100) == amount_cents(str(cents // 100)) == cents

    @given(st.integers(MAX_AMOUNT + 1, MAX_CENTS) | st.integers(-MAX_CENTS, 0))
    def test_every_amount_out_of_range_is_refused(self, cents: int) -> None:
        with pytest.raises(InvalidAmount, match=re.escape(AMOUNT_RANGE)):
            amount_cents(to_decimal(cents))

    @pytest.mark.parametrize(
        "value",
        [
            "1e2",
            "１０",
            "١٠",
            "१०",
            " 10",
            "10 ",
            "1_000",
            ".5",
            "10.",
            "10\n",
            "+1",
            "-1",
            "1.000",
        ],
    )
    def test_strings_follow_the_pattern(self, value: str) -> None:
        with pytest.raises(InvalidAmount, match="digits 0-9"):
            amount_cents(value)
        assert re.fullmatch(AMOUNT.pattern, value) is None

    @pytest.mark.parametrize("value", ["10000000000", "99999999999.99", "1" * 400 + ".5"])
    def test_a_string_of_plain_digits_too_large_is_told_the_range(self, value: str) -> None:
        for spelling in (AMOUNT, CENTRAL_BANK_AMOUNT, SPLIT_VALUE):
            with pytest.raises(InvalidAmount, match=re.escape(AMOUNT_RANGE)):
                amount_cents(value, spelling)

    @pytest.mark.parametrize("value", ["10", "10.5"])
    def test_central_bank_strings_have_two_decimals(self, value: str) -> None:
        with pytest.raises(InvalidAmount, match="always 2 decimals"):
            amount_cents(value, CENTRAL_BANK_AMOUNT)

    @pytest.mark.parametrize(
        "value",
        [Decimal("1E+400"), Decimal("-1E+400"), Decimal("1E-400"), 10**400, float("inf")],
    )
    def test_huge_and_tiny_numbers_are_refused_at_once(self, value: object) -> None:
        with pytest.raises(InvalidAmount):
            amount_cents(value)
        with pytest.raises(InvalidAmount):
            split_value(value)

    @pytest.mark.parametrize("value", [None, True, [1], {"a": 1}, b"10"])
    def test_only_numbers_and_strings(self, value: object) -> None:
        with pytest.raises(InvalidAmount, match="a number, or a string of digits"):
            amount_cents(value)

    def test_split_values_take_four_places_and_are_kept_with_four(self) -> None:
        assert str(split_value("12.3456")) == "12.3456"
        assert str(split_value(Decimal("1." + "0" * 10_000))) == "1.0000"
        assert str(split_value(10)) == "10.0000"
        with pytest.raises(InvalidAmount, match="digits 0-9"):
            split_value("12.34567")
        with pytest.raises(InvalidAmount, match="4 decimal places"):
            split_value(Decimal("12.34567"))


class TestJsonNumber:
    @given(st.integers(-MAX_CENTS, MAX_CENTS))
    def test_amounts_are_written_exactly_with_two_decimals(self, cents: int) -> None:
        written = orjson.dumps(to_decimal(cents), default=json_number)
        assert written == format_amount(cents).encode()
        assert Decimal(written.decode()) == to_decimal(cents)

    def test_nothing_else(self) -> None:
        with pytest.raises(TypeError):
            orjson.dumps(Decimal("NaN"), default=json_number)
        with pytest.raises(TypeError):
            orjson.dumps(object(), default=json_number)


class TestFormatting:
    def test_to_decimal_has_two_places(self) -> None:
        assert to_decimal(5) == Decimal("0.05")
        assert to_decimal(100).as_tuple().exponent == -2
        assert str(to_decimal(-123450)) == "-1234.50"

    @pytest.mark.parametrize(
        ("value", "expected"),
        [(123450, "1234.50"), (1, "0.01"), (0, "0.00"), (-5, "-0.05"), (100000000, "1000000.00")],
    )
    def test_format_amount(self, value: int, expected: str) -> None:
        assert format_amount(value) == expected


class TestFees:
    @pytest.mark.parametrize(
        ("amount", "percent", "expected"),
        [
            (150, "1", 2),  # 1.5 cents: half goes up
            (149, "1", 1),
            (100, "2.5", 3),
            (1234, "0.5", 6),  # 6.17
            (10000, "0", 0),
            (-150, "1", -2),  # ties away from zero, like ROUND_HALF_UP
        ],
    )
    def test_percent_of_rounds_half_up(self, amount: int, percent: str, expected: int) -> None:
        assert percent_of(amount, Decimal(percent)) == expected

    def test_percent_of_refuses_non_finite(self) -> None:
        with pytest.raises(InvalidAmount):
            percent_of(100, Decimal("NaN"))

    def test_percent_of_is_exact_beyond_decimal_precision(self) -> None:
        # The default 28-digit context rounds 1 x 49.999...9% (31 digits) to 50%, which would
        # then round half-up to a cent; the exact share is just under half a cent.
        assert percent_of(1, Decimal("49.99999999999999999999999999999")) == 0

    @given(st.integers(-(10**15), 10**15), st.decimals(allow_nan=False, allow_infinity=False))
    def test_percent_of_is_the_exact_share_rounded_half_up(
        self, amount: int, percent: Decimal
    ) -> None:
        exact = Fraction(amount) * Fraction(percent) / 100
        rounded = math.floor(abs(exact) + Fraction(1, 2))
        assert percent_of(amount, percent) == (rounded if exact >= 0 else -rounded)

    def test_fee_for(self) -> None:
        assert fee_for(10000, 50, Decimal("1.5")) == 200
        assert fee_for(1234, 0, Decimal("0.5")) == 6
        assert fee_for(1000, 99, Decimal("0")) == 99

    @given(st.integers(0, 10**12), st.integers(0, 10**6), st.integers(0, 10000))
    def test_fee_is_within_half_a_cent_of_exact(self, amount: int, fixed: int, bp: int) -> None:
        percent = Decimal(bp) / 100
        exact = Fraction(amount) * Fraction(percent) / 100
        assert abs(fee_for(amount, fixed, percent) - fixed - exact) <= Fraction(1, 2)


def _pct(*values: str) -> list[tuple[SplitType, Decimal]]:
    return [("PERCENTAGE", Decimal(v)) for v in values]


class TestAllocateSplits:
    def test_three_thirds_of_one_hundred_reais(self) -> None:
        shares = allocate_splits(10000, _pct("33.33", "33.33", "33.33"))
        assert shares == [3333, 3333, 3333]
        assert 10000 - sum(shares) == 1  # the account keeps the last cent

    def test_three_thirds_of_one_real_balance_to_the_cent(self) -> None:
        # Exact shares are 33.33 cents each, 99.99 in all, rounded to 100: one split gets 34.
        shares = allocate_splits(100, _pct("33.33", "33.33", "33.33"))
        assert shares == [34, 33, 33]
        assert sum(shares) == 100

    def test_largest_remainder_gets_the_leftover_cent(self) -> None:
        assert allocate_splits(100, _pct("10.4", "20.6", "69")) == [10, 21, 69]

    def test_ties_go_to_the_earlier_split(self) -> None:
        assert allocate_splits(1, _pct("50", "50")) == [1, 0]
        assert allocate_splits(3, _pct("50", "50")) == [2, 1]

    def test_total_is_round_half_even(self) -> None:
        # 25% + 25% of 1 cent is 0.5 cents in all: half-even rounds it to 0, nothing paid.
        assert allocate_splits(1, _pct("25", "25")) == [0, 0]
        # 25% + 25% of 3 cents is 1.5 cents: rounds to 2.
        assert allocate_splits(3, _pct("25", "25")) == [1, 1]

    def test_fixed_is_exact_and_percentage_is_of_gross(self) -> None:
        splits: list[tuple[SplitType, Decimal]] = [
            ("FIXED", Decimal("10.00")),
            ("PERCENTAGE", Decimal("10")),
            ("FIXED", Decimal("0.01")),
        ]
        assert allocate_splits(10000, splits) == [1000, 1000, 1]

    def test_whole_amount_may_be_split(self) -> None:
        assert allocate_splits(999, _pct("100")) == [999]
        assert allocate_splits(999, [("FIXED", Decimal("9.99"))]) == [999]

    def test_no_splits(self) -> None:
        assert allocate_splits(500, []) == []

    @pytest.mark.parametrize(
        "splits",
        [
            [("FIXED", Decimal("100.01"))],
            [("PERCENTAGE", Decimal("60")), ("PERCENTAGE", Decimal("50"))],
            [("FIXED", Decimal("50")), ("PERCENTAGE", Decimal("50.01"))],
        ],
    )
    def test_refuses_more_than_the_amount(self, splits: list[tuple[SplitType, Decimal]]) -> None:
        with pytest.raises(InvalidAmount, match="more than the amount"):
            allocate_splits(10000, splits)

    @pytest.mark.parametrize(
        "splits",
        [
            [("FIXED", Decimal("-1"))],
            [("PERCENTAGE", Decimal("-10"))],
            [("PERCENTAGE", Decimal("Infinity"))],
            [("FIXED", Decimal("NaN"))],
        ],
    )
    def test_refuses_negative_or_non_finite_values(
        self, splits: list[tuple[SplitType, Decimal]]
    ) -> None:
        with pytest.raises(InvalidAmount, match="non-negative"):
            allocate_splits(10000, splits)

    def test_refuses_fixed_with_three_places(self) -> None:
        with pytest.raises(InvalidAmount, match="2 decimal places"):
            allocate_splits(10000, [("FIXED", Decimal("1.001"))])

    def test_refuses_negative_gross(self) -> None:
        with pytest.raises(InvalidAmount):
            allocate_splits(-1, [])

    @given(
        gross=st.integers(min_value=0, max_value=10**12),
        splits=st.lists(
            st.one_of(
                st.tuples(st.just("PERCENTAGE"), st.integers(0, 10000)),  # 0.00% to 100.00%
                st.tuples(st.just("FIXED"), st.integers(0, 10**6)),  # 0.00 to 10,000.00
            ),
            max_size=10,
        ),
    )
    def test_no_cent_is_created_or_lost(self, gross: int, splits: list[tuple[str, int]]) -> None:
        typed: list[tuple[SplitType, Decimal]] = [
            ("PERCENTAGE" if kind == "PERCENTAGE" else "FIXED", Decimal(n) / 100)
            for kind, n in splits
        ]
        exact = [
            Fraction(gross) * Fraction(value) / 100
            if kind == "PERCENTAGE"
            else Fraction(value) * 100
            for kind, value in typed
        ]
        percentage_total = sum(
            (e for e, (kind, _) in zip(exact, typed, strict=True) if kind == "PERCENTAGE"),
            Fraction(0),
        )
        fixed_total = sum(e for e, (kind, _) in zip(exact, typed, strict=True) if kind == "FIXED")
        expected_total = fixed_total + round(percentage_total)
        if expected_total > gross:
            with pytest.raises(InvalidAmount):
                allocate_splits(gross, typed)
            return
        shares = allocate_splits(gross, typed)
        assert len(shares) == len(typed)
        assert sum(shares) == expected_total
        assert gross - sum(shares) >= 0  # what stays with the account
        for share, e, (kind, _) in zip(shares, exact, typed, strict=True):
            assert share >= 0
            if kind == "FIXED":
                assert share == e
            else:
                assert share in (math.floor(e), math.floor(e) + 1)

    @given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=1, max_value=10))
    def test_equal_shares_differ_by_at_most_a_cent(self, gross: int, n: int) -> None:
        percent = (Decimal(100) / n).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
        shares = allocate_splits(gross, _pct(*[str(percent)] * n))
        assert max(shares) - min(shares) <= 1
        assert sum(shares) <= gross
