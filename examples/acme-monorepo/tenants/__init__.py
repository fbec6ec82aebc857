"""Tenants: the directory of organizations and members, tenant contexts, plans, provisioning,
quotas and the audit trail."""

from tenants.context import TenantContext
from tenants.directory import Tenant, TenantDirectory

__all__ = ["Tenant", "TenantContext", "TenantDirectory"]
