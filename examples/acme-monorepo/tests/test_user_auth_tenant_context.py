import pytest

from auth.user_auth import UserAuth
from common.errors import PermissionDenied
from tenants.context import TenantContext
from tenants.directory import TenantDirectory


@pytest.fixture
def orgs():
    directory = TenantDirectory()
    parent = directory.create("acme-holding", "usr_owner", plan="enterprise")
    parent.add_member("usr_admin", "admin")
    parent.add_member("usr_staff", "member")
    child = directory.create("acme-eu", "usr_eu_owner", plan="enterprise", parent=parent)
    child.add_member("usr_eu_billing", "billing")
    return parent, child


def test_direct_membership(orgs):
    parent, _ = orgs
    auth = UserAuth.for_member(parent, "usr_admin")
    assert auth.role == "admin" and auth.can("members.invite") and not auth.can("billing.refund")


def test_membership_is_inherited_from_the_parent(orgs):
    parent, child = orgs
    admin = UserAuth.for_member(child, "usr_admin")
    assert admin.role == "admin" and admin.context.inherited_from == parent.tenant_id
    staff = UserAuth.for_member(child, "usr_staff")
    assert staff.role == "member" and not staff.can("members.invite")


def test_outsiders_and_suspended_tenants_are_refused(orgs):
    parent, child = orgs
    with pytest.raises(PermissionDenied):
        UserAuth.for_member(parent, "usr_eu_billing")
    child.active = False
    with pytest.raises(PermissionDenied, match="suspended"):
        UserAuth.for_member(child, "usr_eu_owner")


def test_switch_tenant_rechecks_membership(orgs):
    parent, child = orgs
    eu = UserAuth.for_member(child, "usr_eu_billing")
    with pytest.raises(PermissionDenied):
        eu.switch_tenant(parent)
    owner = UserAuth.for_member(parent, "usr_owner").switch_tenant(child)
    assert owner.describe()["inherited"] is True and owner.can("billing.refund")


def test_impersonation_and_access_review(orgs):
    parent, _ = orgs
    ctx = TenantContext.for_user(UserAuth("usr_owner", parent), parent)
    staff = ctx.impersonate("usr_staff")
    assert staff.user_id == "usr_staff" and staff.role == "member"
    with pytest.raises(PermissionDenied):
        staff.context.impersonate("usr_admin")
    assert [a.role for a in ctx.member_auths()] == ["admin", "owner", "member"]


def test_token_scopes_narrow_the_role(orgs):
    parent, _ = orgs
    auth = UserAuth.for_member(parent, "usr_owner", scopes=("tenant.read",))
    assert auth.can("tenant.read") and not auth.can("billing.charge")
