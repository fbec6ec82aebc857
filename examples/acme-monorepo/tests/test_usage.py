from billing.usage import UsageBilling, UsageMeter


def test_usage_is_billed_at_unit_prices():
    meter = UsageMeter("cus_40")
    meter.record("api_calls", 5000)
    meter.record("storage_gb", 2)
    result = UsageBilling().bill(meter, "2024-01")
    assert result is not None and result.amount_cents == 124
    assert result.memo == "usage 2024-01"


def test_small_amounts_carry_over():
    billing = UsageBilling()
    small = UsageMeter("cus_41")
    small.record("api_calls", 1000)
    assert billing.bill(small, "2024-01") is None
    assert billing.carried_over == {"cus_41": 20}
    more = UsageMeter("cus_41")
    more.record("api_calls", 1500)
    assert billing.bill(more, "2024-02").amount_cents == 50


def test_overage_has_a_minimum():
    result = UsageBilling().bill_overage("cus_42", 3, "api_calls")
    assert result.amount_cents == 50 and result.memo == "api_calls overage x3"
