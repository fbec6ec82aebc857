"""Subscriptions: a customer on a plan, renewed monthly, with prorated plan changes."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal

from billing.legacy import charge
from billing.payments import ChargeResult
from billing.rates import DEFAULT_RATES, RateCard
from common import clock, ids
from common.errors import PaymentDeclined, ValidationFailed


@dataclass
class Subscription:
    customer_id: str
    plan: str
    period_start: datetime.date
    period_end: datetime.date
    status: str = "active"
    trial: bool = False
    subscription_id: str = field(default_factory=lambda: ids.new_id("subscription"))
    charges: list[ChargeResult] = field(default_factory=list)

    @property
    def days_in_period(self) -> int:
        return (self.period_end - self.period_start).days

    def days_left(self, today: datetime.date) -> int:
        return max(0, (self.period_end - today).days)


class SubscriptionService:
    """Starts, renews and changes subscriptions, charging through the billing backend."""

    def __init__(self, rates: RateCard = DEFAULT_RATES) -> None:
        self.rates = rates
        self.subscriptions: dict[str, Subscription] = {}

    def start(self, customer_id: str, plan: str, *, trial_days: int = 0) -> Subscription:
        """Start ``plan`` today; with a trial nothing is charged until :meth:`convert_trial`."""
        price = self.rates.plan_price(plan)
        today = clock.today()
        if trial_days:
            sub = Subscription(customer_id, plan, today,
                               today + datetime.timedelta(days=trial_days), trial=True)
        else:
            sub = Subscription(customer_id, plan, today, clock.add_months(today, 1))
            self._charge_or_fail(sub, charge(customer_id, price, self.rates.currency,
                                             f"{plan} plan, first month"))
        self.subscriptions[sub.subscription_id] = sub
        return sub

    def convert_trial(self, sub: Subscription) -> Subscription:
        if not sub.trial:
            raise ValidationFailed("not a trial", subscription=sub.subscription_id)
        price = self.rates.plan_price(sub.plan)
        result = charge(sub.customer_id, price, description=f"{sub.plan} plan, trial converted")
        self._charge_or_fail(sub, result)
        sub.trial = False
        sub.period_start = clock.today()
        sub.period_end = clock.add_months(sub.period_start, 1)
        return sub

    def renew(self, sub: Subscription) -> Subscription:
        """Charge the next period; a decline marks the subscription ``past_due``."""
        if sub.status == "canceled":
            raise ValidationFailed("canceled subscriptions do not renew")
        price = self.rates.plan_price(sub.plan)
        result = charge(
            sub.customer_id,
            price,
            self.rates.currency,
            f"{sub.plan} plan renewal",
            idempotency_key=f"{sub.subscription_id}-{sub.period_end.isoformat()}",
        )
        sub.charges.append(result)
        if result.ok:
            sub.period_start, sub.period_end = sub.period_end, clock.add_months(sub.period_end, 1)
            sub.status = "active"
        else:
            sub.status = "past_due"
        return sub

    def change_plan(self, sub: Subscription, new_plan: str) -> Subscription:
        """Switch plan now; an upgrade charges the prorated difference for the days left."""
        old_price, new_price = self.rates.plan_price(sub.plan), self.rates.plan_price(new_plan)
        if new_price > old_price and not sub.trial:
            fraction = Decimal(sub.days_left(clock.today())) / Decimal(sub.days_in_period or 1)
            difference = int((Decimal(new_price - old_price) * fraction).to_integral_value())
            if difference > 0:
                self._charge_or_fail(sub, charge(sub.customer_id, difference, self.rates.currency,
                                                 f"upgrade {sub.plan} -> {new_plan}"))
        sub.plan = new_plan
        return sub

    def cancel(self, sub: Subscription) -> Subscription:
        sub.status = "canceled"
        return sub

    @staticmethod
    def _charge_or_fail(sub: Subscription, result: ChargeResult) -> None:
        sub.charges.append(result)
        if not result.ok:
            raise PaymentDeclined("subscription payment declined", customer=sub.customer_id)
