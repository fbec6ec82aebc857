import json

import pytest

from acme_compat.pydantic_v1 import ValidationError
from tenants.directory import TenantDirectory
from tenants.models import MemberModel, PlanModel, TenantModel


def test_tenant_model_from_domain_object():
    tenant = TenantDirectory().create("acme-corp", "usr_1", plan="team")
    tenant.add_member("usr_2", "admin")
    model = TenantModel.from_tenant(tenant)
    assert model.summary() == {"tenant_id": tenant.tenant_id, "name": "acme-corp", "plan": "team",
                               "parent_id": None, "labels": {}, "member_count": 2}
    assert json.loads(model.json())["members"][0] == {"user_id": "usr_1", "role": "owner"}


def test_validators():
    with pytest.raises(ValidationError, match="lowercase slug"):
        TenantModel(tenant_id="t", name="Not A Slug")
    with pytest.raises(ValidationError, match="at least one owner"):
        TenantModel(tenant_id="t", name="acme-corp", members=[{"user_id": "u", "role": "member"}])
    with pytest.raises(ValidationError, match="role must be one of"):
        MemberModel(user_id="u", role="emperor")


def test_config_options():
    member = MemberModel(user_id="  usr_3  ")
    assert member.user_id == "usr_3"
    with pytest.raises(TypeError):
        member.role = "admin"
    with pytest.raises(ValidationError):
        TenantModel.parse_obj({"tenant_id": "t", "name": "acme-corp", "unexpected": 1})


def test_plan_model_accepts_the_legacy_price_field():
    plan = PlanModel.parse_obj({"name": "team", "price": 49.0, "colour": "blue"})
    assert plan.monthly_cents == 4900
    assert plan.dict() == {"name": "team", "monthly_cents": 4900, "max_members": 10, "features": []}
    with pytest.raises(ValidationError, match="must not be negative"):
        PlanModel(name="x", monthly_cents=-1)
