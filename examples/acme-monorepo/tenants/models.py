"""Wire models for tenants (Pydantic v1 API, see ``acme_compat.pydantic_v1``)."""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from acme_compat.pydantic_v1 import BaseModel, Field, root_validator, validator
from tenants.directory import ROLES, Tenant

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$")


class MemberModel(BaseModel):
    user_id: str
    role: str = "member"

    @validator("role")
    def role_is_known(cls, value: str) -> str:
        if value not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        return value

    class Config:
        frozen = True
        anystr_strip_whitespace = True


class TenantModel(BaseModel):
    """A tenant as the API shows it."""

    tenant_id: str
    name: str
    plan: str = "starter"
    parent_id: Optional[str] = None
    members: List[MemberModel] = Field(default_factory=list)
    labels: Dict[str, str] = Field(default_factory=dict)

    @validator("name")
    def name_is_slug(cls, value: str) -> str:
        if not SLUG.match(value):
            raise ValueError("name must be a lowercase slug of 3-40 characters")
        return value

    @root_validator
    def has_an_owner(cls, values: dict) -> dict:
        members = values.get("members") or []
        if members and not any(m.role == "owner" for m in members):
            raise ValueError("a tenant needs at least one owner")
        return values

    class Config:
        allow_mutation = False
        extra = "forbid"

    @classmethod
    def from_tenant(cls, tenant: Tenant) -> TenantModel:
        return cls.parse_obj(
            {
                "tenant_id": tenant.tenant_id,
                "name": tenant.name,
                "plan": tenant.plan,
                "parent_id": tenant.parent.tenant_id if tenant.parent else None,
                "members": [{"user_id": u, "role": r} for u, r in sorted(tenant.members.items())],
            }
        )

    def summary(self) -> dict:
        data = self.dict(exclude={"members"})
        data["member_count"] = len(self.members)
        return data


class PlanModel(BaseModel):
    name: str
    monthly_cents: int
    max_members: int = 10
    features: List[str] = Field(default_factory=list)

    @validator("monthly_cents", "max_members")
    def non_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError("must not be negative")
        return value

    @root_validator(pre=True)
    def legacy_price_field(cls, values: dict) -> dict:
        # Catalogs written before 2022 used "price" in dollars.
        if "price" in values and "monthly_cents" not in values:
            values = dict(values)
            values["monthly_cents"] = int(round(float(values.pop("price")) * 100))
        return values

    class Config:
        extra = "ignore"
