"""``UserAuth``: an authenticated user acting within one tenant.

``UserAuth`` and :class:`tenants.context.TenantContext` depend on each other: a user's
permissions come from their role in the tenant, and a tenant resolves inherited membership
(a member of a parent organization is a member of its child tenants) by authenticating the user
against the parent. Both modules import each other as modules, so either may be imported first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auth.policies import Policy, default_policy
from common.errors import PermissionDenied
from tenants import context as tenant_context
from tenants.directory import Tenant


@dataclass
class UserAuth:
    """Who is acting (``user_id``), in which tenant, with which role and token scopes."""

    user_id: str
    tenant: Tenant
    policy: Policy = default_policy
    scopes: tuple[str, ...] = ()
    context: tenant_context.TenantContext | None = field(default=None, repr=False)

    @classmethod
    def for_member(cls, tenant: Tenant, user_id: str, *, policy: Policy = default_policy,
                   scopes: tuple[str, ...] = ()) -> UserAuth:
        """Authenticate ``user_id`` in ``tenant``; raises ``PermissionDenied`` for outsiders."""
        auth = cls(user_id, tenant, policy, scopes)
        auth.context = tenant_context.TenantContext.for_user(auth, tenant)
        return auth

    @property
    def role(self) -> str | None:
        return self.context.role if self.context is not None else None

    def can(self, permission: str) -> bool:
        """True when the role allows ``permission`` and the token scopes (if any) include it."""
        if self.scopes and permission not in self.scopes and "*" not in self.scopes:
            return False
        return self.policy.allows(self.role, permission)

    def require(self, permission: str) -> None:
        if not self.can(permission):
            raise PermissionDenied(
                f"{permission} not allowed", user=self.user_id, tenant=self.tenant.tenant_id
            )

    def switch_tenant(self, tenant: Tenant) -> UserAuth:
        """The same user acting in another tenant (membership is checked again)."""
        switched = UserAuth(self.user_id, tenant, self.policy, self.scopes)
        switched.context = tenant_context.TenantContext.for_user(switched, tenant)
        return switched

    def describe(self) -> dict:
        return {"user": self.user_id, "tenant": self.tenant.tenant_id, "role": self.role,
                "inherited": bool(self.context and self.context.inherited_from)}
