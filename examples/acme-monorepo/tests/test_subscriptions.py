import datetime

import pytest

from billing.subscriptions import SubscriptionService
from common import clock
from common.errors import PaymentDeclined, ValidationFailed


def test_start_charges_first_month(frozen_day):
    sub = SubscriptionService().start("cus_30", "team")
    assert sub.charges[0].amount_cents == 4900
    assert sub.period_end == datetime.date(2024, 2, 29)


def test_trial_converts_later(frozen_day):
    service = SubscriptionService()
    sub = service.start("cus_31", "starter", trial_days=14)
    assert sub.trial and sub.charges == []
    service.convert_trial(sub)
    assert not sub.trial and sub.charges[0].amount_cents == 900
    with pytest.raises(ValidationFailed):
        service.convert_trial(sub)


def test_renewal_moves_the_period_and_declines_go_past_due(frozen_day):
    service = SubscriptionService()
    sub = service.start("cus_32", "starter")
    service.renew(sub)
    assert sub.period_start == datetime.date(2024, 2, 29)
    assert sub.period_end == datetime.date(2024, 3, 29)
    declined = service.start("cus_declined_2", "starter", trial_days=1)
    declined.trial = False
    service.renew(declined)
    assert declined.status == "past_due"


def test_upgrade_charges_the_prorated_difference():
    service = SubscriptionService()
    with clock.frozen(datetime.datetime(2024, 3, 1)):
        sub = service.start("cus_33", "starter")
    with clock.frozen(datetime.datetime(2024, 3, 16)):
        service.change_plan(sub, "team")
    assert sub.plan == "team"
    assert sub.charges[-1].amount_cents == 2065  # (4900 - 900) * 16/31


def test_declined_first_payment_raises(frozen_day):
    with pytest.raises(PaymentDeclined):
        SubscriptionService().start("cus_declined_3", "team")
