"""The deprecated entry point must keep behaving exactly like the new one until it is retired."""

import pytest

from billing import legacy
from billing.store import charges


def test_legacy_charge_maps_arguments():
    with pytest.warns(DeprecationWarning):
        result = legacy.charge("cus_9", 1234, "EUR", "old style")
    assert (result.customer_id, result.amount_cents, result.currency, result.memo) == (
        "cus_9", 1234, "EUR", "old style")


def test_legacy_charge_keywords():
    with pytest.warns(DeprecationWarning):
        result = legacy.charge(customer_id="cus_10", amount_cents=99, description="kw")
    assert result.ok and result.memo == "kw" and result.currency == "USD"


def test_legacy_charge_idempotency():
    with pytest.warns(DeprecationWarning):
        first = legacy.charge("cus_11", 500, idempotency_key="same")
        again = legacy.charge("cus_11", 500, idempotency_key="same")
    assert first.charge_id == again.charge_id
    assert len(charges.for_customer("cus_11")) == 1
