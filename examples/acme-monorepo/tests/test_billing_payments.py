import pytest

from billing import payments
from billing.refunds import refund
from billing.store import charges
from common.errors import PaymentDeclined, ValidationFailed
from common.events import bus


def test_charge_succeeds_and_is_recorded():
    result = payments.charge(2500, "cus_1", memo="widgets")
    assert result.ok and result.amount_cents == 2500 and result.memo == "widgets"
    assert charges.get(result.charge_id).customer_id == "cus_1"
    assert bus.names() == ["charge.succeeded"]


def test_declined_customer_is_a_value_not_an_exception():
    result = payments.charge(100, "cus_declined_card")
    assert result.status == "declined"
    with pytest.raises(PaymentDeclined):
        payments.require_success(result)


def test_idempotency_key_charges_once():
    first = payments.charge(700, "cus_2", idempotency_key="k1")
    second = payments.charge(700, "cus_2", idempotency_key="k1")
    assert first == second and len(charges.all()) == 1


@pytest.mark.parametrize("amount", [0, -5])
def test_non_positive_amounts_are_rejected(amount):
    with pytest.raises(ValidationFailed):
        payments.charge(amount, "cus_3")


def test_refunds_never_exceed_the_capture():
    result = payments.charge(1000, "cus_4")
    refund(result.charge_id, 400)
    assert payments.captured_total("cus_4") == 600
    with pytest.raises(ValidationFailed):
        refund(result.charge_id, 700)
    refund(result.charge_id)
    assert payments.captured_total("cus_4") == 0
