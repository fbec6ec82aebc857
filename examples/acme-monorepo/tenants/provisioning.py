"""Provisioning: create a tenant with its owner, charge the set-up fee, add sub-tenants."""

from __future__ import annotations

from dataclasses import dataclass

from billing import legacy as legacy_billing
from billing.payments import ChargeResult
from billing.rates import DEFAULT_RATES
from common.errors import PaymentDeclined, PermissionDenied
from common.events import bus
from tenants.audit import audit_log
from tenants.directory import Tenant, TenantDirectory
from tenants.plans import default_catalog

SETUP_FEE_CENTS = {"starter": 0, "team": 2500, "enterprise": 25000}
SUB_TENANT_FEE_CENTS = 1500


@dataclass
class Provisioned:
    tenant: Tenant
    charges: list[ChargeResult]


class Provisioner:
    def __init__(self, directory: TenantDirectory) -> None:
        self.directory = directory

    def provision(self, name: str, owner_id: str, plan: str = "starter") -> Provisioned:
        """Create the tenant and charge its first month plus the set-up fee (if any)."""
        default_catalog.get(plan)
        tenant = self.directory.create(name, owner_id, plan=plan)
        charges = []
        first_month = legacy_billing.charge(tenant.customer_id, DEFAULT_RATES.plan_price(plan),
                                            "USD", f"{plan} plan, first month")
        charges.append(first_month)
        fee = SETUP_FEE_CENTS.get(plan, 0)
        if first_month.ok and fee:
            charges.append(legacy_billing.charge(tenant.customer_id, fee,
                                                 description=f"{plan} set-up fee"))
        if not all(c.ok for c in charges):
            tenant.active = False
            raise PaymentDeclined("provisioning payment declined", tenant=tenant.tenant_id)
        audit_log.record(tenant.tenant_id, owner_id, "tenant.created", plan=plan)
        bus.publish("tenant.provisioned", tenant_id=tenant.tenant_id, plan=plan)
        return Provisioned(tenant, charges)

    def add_sub_tenant(self, parent: Tenant, name: str, owner_id: str) -> Provisioned:
        """A child tenant of an enterprise tenant; its members inherit from the parent."""
        if not default_catalog.allows(parent.plan, "sub_tenants"):
            raise PermissionDenied("plan does not allow sub-tenants", plan=parent.plan)
        child = self.directory.create(name, owner_id, plan=parent.plan, parent=parent)
        child.customer_id = parent.customer_id
        fee = legacy_billing.charge(
            customer_id=parent.customer_id,
            amount_cents=SUB_TENANT_FEE_CENTS,
            description=f"sub-tenant {name}",
            idempotency_key=f"subtenant-{child.tenant_id}",
        )
        if not fee.ok:
            child.active = False
            raise PaymentDeclined("sub-tenant fee declined", tenant=child.tenant_id)
        audit_log.record(parent.tenant_id, owner_id, "tenant.sub_tenant_added", child=name)
        return Provisioned(child, [fee])
