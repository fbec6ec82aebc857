"""Metered usage: record events per meter, bill them at the end of the period."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

import billing.legacy as legacy_billing
from billing.payments import ChargeResult
from billing.rates import DEFAULT_RATES, RateCard
from common.errors import ValidationFailed

MINIMUM_CHARGE_CENTS = 50


@dataclass
class UsageMeter:
    """Counts per meter for one customer and period."""

    customer_id: str
    counts: Counter = field(default_factory=Counter)

    def record(self, meter: str, quantity: int = 1) -> None:
        if quantity < 0:
            raise ValidationFailed("usage cannot be negative", meter=meter)
        self.counts[meter] += quantity

    def cost_cents(self, rates: RateCard) -> int:
        cost = sum((rates.unit_price(m) * q for m, q in self.counts.items()), Decimal(0))
        return int(cost.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


class UsageBilling:
    """Bills metered usage; amounts under the minimum carry over to the next period."""

    def __init__(self, rates: RateCard = DEFAULT_RATES) -> None:
        self.rates = rates
        self.carried_over: dict[str, int] = {}

    def bill(self, meter: UsageMeter, period: str) -> ChargeResult | None:
        amount = meter.cost_cents(self.rates) + self.carried_over.pop(meter.customer_id, 0)
        if amount < MINIMUM_CHARGE_CENTS:
            if amount:
                self.carried_over[meter.customer_id] = amount
            return None
        return legacy_billing.charge(
            meter.customer_id,
            amount,
            self.rates.currency,
            f"usage {period}",
            f"usage-{meter.customer_id}-{period}",
        )

    def bill_overage(self, customer_id: str, units: int, meter: str) -> ChargeResult:
        """Immediate charge for usage beyond a hard quota (not carried over)."""
        price = self.rates.unit_price(meter) * units
        cents = max(int(price.to_integral_value()), MINIMUM_CHARGE_CENTS)
        return legacy_billing.charge(customer_id, amount_cents=cents,
                                     description=f"{meter} overage x{units}")
