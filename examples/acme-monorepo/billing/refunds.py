"""Refunds against succeeded charges, full or partial, never more than was captured."""

from __future__ import annotations

from dataclasses import dataclass

from billing.store import charges
from common import ids
from common.errors import NotFound, ValidationFailed
from common.events import bus


@dataclass(frozen=True)
class Refund:
    refund_id: str
    charge_id: str
    amount_cents: int
    reason: str


def refund(charge_id: str, amount_cents: int | None = None, reason: str = "") -> Refund:
    """Refund ``amount_cents`` of a charge (all that remains when ``None``)."""
    record = charges.get(charge_id)
    if record is None:
        raise NotFound("no such charge", charge_id=charge_id)
    if record.status != "succeeded":
        raise ValidationFailed("only succeeded charges can be refunded", status=record.status)
    remaining = record.amount_cents - record.refunded_cents
    amount = remaining if amount_cents is None else amount_cents
    if amount <= 0 or amount > remaining:
        raise ValidationFailed("refund exceeds the refundable amount", remaining=remaining)
    record.refunded_cents += amount
    result = Refund(ids.new_id("refund"), charge_id, amount, reason)
    bus.publish("charge.refunded", charge_id=charge_id, amount_cents=amount)
    return result
