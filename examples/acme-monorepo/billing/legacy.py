"""The pre-2023 billing entry point. Deprecated: use :func:`billing.payments.charge`.

Argument mapping to the new API::

    legacy.charge(customer_id, amount_cents, currency="USD", description="", idempotency_key=None)
    payments.charge(amount_cents, customer_id, *, currency="USD", memo="", idempotency_key=None)

The first two positional arguments swap, ``description`` is renamed ``memo``, and ``currency``
and ``idempotency_key`` become keyword-only. The result is the same ``ChargeResult``.
"""

from __future__ import annotations

import warnings

from billing import payments


def charge(
    customer_id: str,
    amount_cents: int,
    currency: str = "USD",
    description: str = "",
    idempotency_key: str | None = None,
) -> payments.ChargeResult:
    """Deprecated alias of :func:`billing.payments.charge` with the old argument order."""
    warnings.warn(
        "billing.legacy.charge is deprecated; use billing.payments.charge",
        DeprecationWarning,
        stacklevel=2,
    )
    return payments.charge(
        amount_cents,
        customer_id,
        currency=currency,
        memo=description,
        idempotency_key=idempotency_key,
    )
