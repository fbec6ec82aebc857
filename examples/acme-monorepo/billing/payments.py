"""Charging customers: the one supported entry point is :func:`charge`.

The payment processor is simulated: customer ids starting with ``cus_declined`` are declined,
and single charges above ``MAX_CHARGE_CENTS`` are refused as suspicious.
"""

from __future__ import annotations

from dataclasses import dataclass

from billing.store import ChargeRecord, charges
from common import ids
from common.errors import PaymentDeclined, ValidationFailed
from common.events import bus
from common.money import minor_units

MAX_CHARGE_CENTS = 1_000_000


@dataclass(frozen=True)
class ChargeResult:
    """The outcome of a charge. ``ok`` is False for a declined charge (not an exception)."""

    charge_id: str
    customer_id: str
    amount_cents: int
    currency: str
    status: str
    memo: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"


def _result(record: ChargeRecord) -> ChargeResult:
    return ChargeResult(
        charge_id=record.charge_id,
        customer_id=record.customer_id,
        amount_cents=record.amount_cents,
        currency=record.currency,
        status=record.status,
        memo=record.memo,
    )


def charge(
    amount_cents: int,
    customer_id: str,
    *,
    currency: str = "USD",
    memo: str = "",
    idempotency_key: str | None = None,
) -> ChargeResult:
    """Charge ``customer_id`` ``amount_cents`` minor units of ``currency``.

    A repeated ``idempotency_key`` returns the first charge's result without charging again.
    Raises ``ValidationFailed`` for a non-positive amount or an unknown currency. A declined
    card is a result with ``status == "declined"``, not an exception.
    """
    if idempotency_key:
        existing = charges.by_idempotency_key(idempotency_key)
        if existing is not None:
            return _result(existing)
    if not isinstance(amount_cents, int) or amount_cents <= 0:
        raise ValidationFailed("charge amount must be a positive integer", amount=amount_cents)
    if not customer_id:
        raise ValidationFailed("a customer id is required")
    minor_units(currency)
    if customer_id.startswith("cus_declined") or amount_cents > MAX_CHARGE_CENTS:
        status = "declined"
    else:
        status = "succeeded"
    record = charges.add(
        ChargeRecord(
            charge_id=ids.new_id("charge"),
            customer_id=customer_id,
            amount_cents=amount_cents,
            currency=currency,
            memo=memo,
            status=status,
            idempotency_key=idempotency_key,
        )
    )
    bus.publish(f"charge.{status}", charge_id=record.charge_id, customer_id=customer_id,
                amount_cents=amount_cents, currency=currency)
    return _result(record)


def require_success(result: ChargeResult) -> ChargeResult:
    """Turn a declined charge into ``PaymentDeclined`` for callers that cannot continue."""
    if not result.ok:
        raise PaymentDeclined(
            "payment declined", charge_id=result.charge_id, customer_id=result.customer_id
        )
    return result


def captured_total(customer_id: str, currency: str = "USD") -> int:
    """Sum of the customer's succeeded charges in ``currency``, net of refunds."""
    return sum(
        r.amount_cents - r.refunded_cents
        for r in charges.for_customer(customer_id)
        if r.status == "succeeded" and r.currency == currency
    )
