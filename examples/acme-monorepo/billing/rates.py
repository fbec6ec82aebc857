"""Price lists: per-plan monthly prices and metered unit prices, loaded from YAML."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml

from common.errors import NotFound


@dataclass(frozen=True)
class RateCard:
    """Monthly price per plan and per-unit prices for metered usage, in minor units."""

    currency: str
    plans: dict[str, int]
    metered: dict[str, Decimal]

    def plan_price(self, plan: str) -> int:
        try:
            return self.plans[plan]
        except KeyError:
            raise NotFound(f"no price for plan {plan!r}", plan=plan) from None

    def unit_price(self, meter: str) -> Decimal:
        try:
            return self.metered[meter]
        except KeyError:
            raise NotFound(f"no price for meter {meter!r}", meter=meter) from None


DEFAULT_RATES = RateCard(
    currency="USD",
    plans={"starter": 900, "team": 4900, "enterprise": 49900},
    metered={"api_calls": Decimal("0.02"), "storage_gb": Decimal("12"), "seats": Decimal("800")},
)


def load_rate_card(path: str | Path) -> RateCard:
    """Read a rate card from YAML (``currency``, ``plans``, ``metered``)."""
    text = Path(path).read_text(encoding="utf-8")
    data = yaml.load(text)
    return RateCard(
        currency=data.get("currency", "USD"),
        plans={name: int(price) for name, price in data.get("plans", {}).items()},
        metered={name: Decimal(str(p)) for name, p in data.get("metered", {}).items()},
    )
