from decimal import Decimal

import pytest

from common.errors import ValidationFailed
from common.money import Money, total


def test_parse_rounds_half_even():
    assert Money.parse("12.305").amount == 1230
    assert Money.parse("12.315").amount == 1232
    assert Money.parse("1500", "JPY") == Money(1500, "JPY")


def test_arithmetic_refuses_mixed_currencies():
    assert Money(100) + Money(250) == Money(350)
    with pytest.raises(ValidationFailed):
        Money(100) + Money(100, "EUR")


def test_allocate_sums_exactly():
    parts = Money(1000).allocate(3)
    assert [p.amount for p in parts] == [334, 333, 333]
    assert total(parts) == Money(1000)


def test_times_and_format():
    assert Money(1999).times(Decimal("0.08")) == Money(160)
    assert Money(123456).format() == "1,234.56 USD"
    assert Money(-5, "JPY").format() == "-5 JPY"


def test_float_amounts_are_rejected():
    with pytest.raises(ValidationFailed):
        Money(10.5)  # type: ignore[arg-type]
