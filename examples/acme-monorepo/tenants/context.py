"""``TenantContext``: the tenant a request acts in, and the acting user's role there.

See :mod:`auth.user_auth` for the other half of the mutual dependency.
"""

from __future__ import annotations

from dataclasses import dataclass

from auth import user_auth
from common.errors import PermissionDenied
from tenants.directory import Tenant


@dataclass
class TenantContext:
    """The acting user's role in ``tenant``; ``inherited_from`` names the parent it came from."""

    tenant: Tenant
    user_id: str
    role: str
    inherited_from: str | None = None

    @classmethod
    def for_user(cls, auth: user_auth.UserAuth, tenant: Tenant) -> TenantContext:
        """The context of ``auth`` in ``tenant``: a direct role, or one inherited from a parent
        organization (the user is authenticated against the parent). Raises ``PermissionDenied``
        when the user is not a member of the tenant or of any ancestor, or the tenant is
        suspended."""
        if not tenant.active:
            raise PermissionDenied("tenant suspended", tenant=tenant.tenant_id)
        role = tenant.role_of(auth.user_id)
        if role is not None:
            return cls(tenant, auth.user_id, role)
        if tenant.parent is not None:
            parent_auth = user_auth.UserAuth.for_member(
                tenant.parent, auth.user_id, policy=auth.policy, scopes=auth.scopes
            )
            parent_role = parent_auth.role or "member"
            role = parent_role if parent_role in ("owner", "admin") else "member"
            return cls(tenant, auth.user_id, role, inherited_from=tenant.parent.tenant_id)
        raise PermissionDenied("not a member", user=auth.user_id, tenant=tenant.tenant_id)

    def impersonate(self, member_id: str) -> user_auth.UserAuth:
        """Act as another member of this tenant (owners and admins only)."""
        if self.role not in ("owner", "admin"):
            raise PermissionDenied("only owners and admins impersonate", user=self.user_id)
        if self.tenant.role_of(member_id) == "owner" and self.role != "owner":
            raise PermissionDenied("admins cannot impersonate owners")
        return user_auth.UserAuth.for_member(self.tenant, member_id)

    def member_auths(self) -> list[user_auth.UserAuth]:
        """A ``UserAuth`` for every direct member (used by the nightly access review)."""
        return [user_auth.UserAuth.for_member(self.tenant, uid) for uid in sorted(self.tenant.members)]

    def describe(self) -> dict:
        return {"tenant": self.tenant.tenant_id, "user": self.user_id, "role": self.role,
                "inherited_from": self.inherited_from}
