"""Money as integer minor units plus an ISO 4217 currency code.

Floats never touch money: amounts are integers of the currency's minor unit (cents for USD,
yen for JPY), and conversions round half-even at the last step only.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from common.errors import ValidationFailed

MINOR_UNITS = {"USD": 2, "EUR": 2, "GBP": 2, "CHF": 2, "JPY": 0}


def minor_units(currency: str) -> int:
    """Number of decimal places of ``currency``; unknown currencies are rejected."""
    try:
        return MINOR_UNITS[currency]
    except KeyError:
        raise ValidationFailed(f"unsupported currency {currency!r}", currency=currency) from None


@dataclass(frozen=True, order=True)
class Money:
    """An amount in minor units. Arithmetic between different currencies is refused."""

    amount: int
    currency: str = "USD"

    def __post_init__(self) -> None:
        if not isinstance(self.amount, int) or isinstance(self.amount, bool):
            raise ValidationFailed("money amounts are integers of minor units", amount=self.amount)
        minor_units(self.currency)

    @classmethod
    def parse(cls, text: str, currency: str = "USD") -> Money:
        """Parse a decimal string such as ``"12.30"`` into minor units."""
        places = minor_units(currency)
        try:
            value = Decimal(text.strip())
        except ArithmeticError:
            raise ValidationFailed(f"not an amount: {text!r}") from None
        scaled = (value * (10**places)).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
        return cls(int(scaled), currency)

    @classmethod
    def zero(cls, currency: str = "USD") -> Money:
        return cls(0, currency)

    def _same(self, other: Money) -> None:
        if self.currency != other.currency:
            raise ValidationFailed(
                "currency mismatch", left=self.currency, right=other.currency
            )

    def __add__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount - other.amount, self.currency)

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def times(self, factor: Decimal | int | str) -> Money:
        """Multiply by a decimal factor (a tax rate, a proration), rounding half-even."""
        product = Decimal(self.amount) * Decimal(factor)
        return Money(int(product.quantize(Decimal(1), rounding=ROUND_HALF_EVEN)), self.currency)

    def allocate(self, parts: int) -> list[Money]:
        """Split into ``parts`` amounts that differ by at most one minor unit and sum exactly."""
        if parts <= 0:
            raise ValidationFailed("parts must be positive", parts=parts)
        base, remainder = divmod(self.amount, parts)
        return [Money(base + (1 if i < remainder else 0), self.currency) for i in range(parts)]

    def format(self) -> str:
        places = minor_units(self.currency)
        sign = "-" if self.amount < 0 else ""
        whole, frac = divmod(abs(self.amount), 10**places) if places else (abs(self.amount), 0)
        body = f"{whole:,}" + (f".{frac:0{places}d}" if places else "")
        return f"{sign}{body} {self.currency}"

    def __str__(self) -> str:
        return self.format()


def total(amounts: list[Money], currency: str = "USD") -> Money:
    """Sum ``amounts`` (all in ``currency``); the sum of nothing is zero."""
    result = Money.zero(currency)
    for amount in amounts:
        result = result + amount
    return result
