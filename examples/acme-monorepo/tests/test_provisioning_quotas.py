import pytest

from auth.seats import SeatPool
from billing.store import charges
from common.errors import PaymentDeclined, PermissionDenied, QuotaExceeded
from tenants.audit import audit_log
from tenants.directory import TenantDirectory
from tenants.provisioning import Provisioner
from tenants.quotas import QuotaTracker


def test_provision_charges_month_and_setup_fee():
    done = Provisioner(TenantDirectory()).provision("globex", "usr_1", "team")
    assert [c.amount_cents for c in done.charges] == [4900, 2500]
    assert "tenant.created" in audit_log.actions(done.tenant.tenant_id)


def test_declined_sub_tenant_fee_suspends_the_child():
    directory = TenantDirectory()
    provisioner = Provisioner(directory)
    ent = provisioner.provision("initech", "usr_2", "enterprise").tenant
    ent.customer_id = "cus_declined_card_expired"
    with pytest.raises(PaymentDeclined):
        provisioner.add_sub_tenant(ent, "initech-tps", "usr_2")
    assert directory.by_name("initech-tps").active is False


def test_sub_tenants_need_enterprise_and_pay_a_fee():
    provisioner = Provisioner(TenantDirectory())
    team = provisioner.provision("hooli", "usr_3", "team").tenant
    with pytest.raises(PermissionDenied):
        provisioner.add_sub_tenant(team, "hooli-xyz", "usr_3")
    ent = provisioner.provision("umbrella", "usr_4", "enterprise").tenant
    child = provisioner.add_sub_tenant(ent, "umbrella-labs", "usr_4")
    assert child.tenant.parent is ent and child.charges[0].amount_cents == 1500
    assert charges.for_customer(ent.customer_id)[-1].memo == "sub-tenant umbrella-labs"


def test_member_quota_and_api_overage():
    provisioner = Provisioner(TenantDirectory())
    starter = provisioner.provision("small-co", "usr_5").tenant
    quotas = QuotaTracker()
    for i in range(4):
        starter.add_member(f"usr_m{i}")
    with pytest.raises(QuotaExceeded):
        quotas.check_members(starter)
    ent = provisioner.provision("big-co", "usr_6", "enterprise").tenant
    for _ in range(1000):
        assert quotas.record_call(ent) is None
    overage = quotas.record_call(ent)
    assert overage is not None and overage.amount_cents == 2000
    assert quotas.api_limit(ent) == 11_000
    assert quotas.api_limit(starter) == 5_000
    for _ in range(5_000):
        quotas.record_call(starter)
    with pytest.raises(QuotaExceeded, match="API call quota"):
        quotas.record_call(starter)
    assert quotas.buy_member_pack(starter, 15).amount_cents == 20_000


def test_seat_pool_buys_when_full():
    pool = SeatPool("ten_1", "cus_50")
    assert pool.buy(2).amount_cents == 1600
    assert pool.assign("a") is None and pool.assign("b") is None
    extra = pool.assign("c")
    assert extra is not None and extra.memo == "SSO seat for c" and pool.purchased == 3
    declined = SeatPool("ten_2", "cus_declined_seats")
    assert declined.assign("x").status == "declined" and declined.assigned == set()
