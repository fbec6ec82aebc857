"""The tenant directory: organizations, their members and roles, and parent organizations."""

from __future__ import annotations

from dataclasses import dataclass, field

from common import ids
from common.errors import NotFound, ValidationFailed

ROLES = ("owner", "admin", "billing", "member")


@dataclass
class Tenant:
    """An organization. Members of ``parent`` are members of this tenant too."""

    name: str
    plan: str = "starter"
    tenant_id: str = field(default_factory=lambda: ids.new_id("tenant"))
    customer_id: str = field(default_factory=lambda: ids.new_id("customer"))
    parent: Tenant | None = field(default=None, repr=False)
    members: dict[str, str] = field(default_factory=dict)
    active: bool = True

    def role_of(self, user_id: str) -> str | None:
        """The direct role of ``user_id`` (inherited roles are resolved by TenantContext)."""
        return self.members.get(user_id)

    def add_member(self, user_id: str, role: str = "member") -> None:
        if role not in ROLES:
            raise ValidationFailed(f"unknown role {role!r}", role=role)
        self.members[user_id] = role

    def remove_member(self, user_id: str) -> None:
        if self.members.get(user_id) == "owner" and list(self.members.values()).count("owner") == 1:
            raise ValidationFailed("a tenant keeps at least one owner")
        self.members.pop(user_id, None)

    def ancestry(self) -> list[Tenant]:
        chain, node = [], self.parent
        while node is not None:
            if node in chain or node is self:
                raise ValidationFailed("tenant hierarchy has a cycle", tenant=self.tenant_id)
            chain.append(node)
            node = node.parent
        return chain


class TenantDirectory:
    """All tenants by id and by name."""

    def __init__(self) -> None:
        self._tenants: dict[str, Tenant] = {}

    def create(self, name: str, owner_id: str, *, plan: str = "starter",
               parent: Tenant | None = None) -> Tenant:
        if any(t.name == name for t in self._tenants.values()):
            raise ValidationFailed("tenant name taken", name=name)
        tenant = Tenant(name=name, plan=plan, parent=parent)
        tenant.add_member(owner_id, "owner")
        self._tenants[tenant.tenant_id] = tenant
        return tenant

    def get(self, tenant_id: str) -> Tenant:
        try:
            return self._tenants[tenant_id]
        except KeyError:
            raise NotFound("no such tenant", tenant_id=tenant_id) from None

    def by_name(self, name: str) -> Tenant:
        for tenant in self._tenants.values():
            if tenant.name == name:
                return tenant
        raise NotFound("no such tenant", name=name)

    def children(self, tenant: Tenant) -> list[Tenant]:
        return [t for t in self._tenants.values() if t.parent is tenant]

    def all(self) -> list[Tenant]:
        return list(self._tenants.values())
