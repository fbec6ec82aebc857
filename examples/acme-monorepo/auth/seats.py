"""Paid SSO seats: tenants on SSO pay per seat, charged when a seat is added."""

from __future__ import annotations

from dataclasses import dataclass, field

import billing.legacy
from billing.payments import ChargeResult
from common.errors import QuotaExceeded, ValidationFailed

SEAT_PRICE_CENTS = 800


@dataclass
class SeatPool:
    """Seats bought by one tenant; each assigned user takes one."""

    tenant_id: str
    customer_id: str
    purchased: int = 0
    assigned: set[str] = field(default_factory=set)
    limit: int = 500

    def buy(self, count: int) -> ChargeResult:
        if count <= 0:
            raise ValidationFailed("seat count must be positive")
        if self.purchased + count > self.limit:
            raise QuotaExceeded("seat limit reached", limit=self.limit)
        result = billing.legacy.charge(self.customer_id, SEAT_PRICE_CENTS * count,
                                       description=f"{count} SSO seats")
        if result.ok:
            self.purchased += count
        return result

    def assign(self, user_id: str) -> ChargeResult | None:
        """Give ``user_id`` a seat, buying one more when the pool is full."""
        if user_id in self.assigned:
            return None
        result = None
        if len(self.assigned) >= self.purchased:
            result = billing.legacy.charge(
                customer_id=self.customer_id,
                amount_cents=SEAT_PRICE_CENTS,
                description=f"SSO seat for {user_id}",
            )
            if not result.ok:
                return result
            self.purchased += 1
        self.assigned.add(user_id)
        return result

    def release(self, user_id: str) -> None:
        self.assigned.discard(user_id)
