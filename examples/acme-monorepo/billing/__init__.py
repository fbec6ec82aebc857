"""Billing: charges, invoices, subscriptions, usage metering and refunds.

New code charges customers through :func:`billing.payments.charge`. ``billing.legacy.charge``
is the pre-2023 entry point with the old argument order; it is deprecated and being retired.
"""

from billing.payments import ChargeResult, charge

__all__ = ["ChargeResult", "charge"]
