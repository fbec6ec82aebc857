"""Member and API-call quotas per plan, with paid overage for enterprise tenants."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from billing.legacy import charge as legacy_charge
from billing.payments import ChargeResult
from common.errors import QuotaExceeded
from tenants.directory import Tenant
from tenants.plans import PlanCatalog, default_catalog

API_CALLS_PER_MEMBER = 1_000
OVERAGE_BLOCK = 10_000
OVERAGE_BLOCK_CENTS = 2_000


@dataclass
class QuotaTracker:
    catalog: PlanCatalog = default_catalog
    api_calls: Counter = field(default_factory=Counter)
    overage_blocks: Counter = field(default_factory=Counter)

    def check_members(self, tenant: Tenant, adding: int = 1) -> None:
        limit = self.catalog.get(tenant.plan).max_members
        if len(tenant.members) + adding > limit:
            raise QuotaExceeded("member limit reached", limit=limit, plan=tenant.plan)

    def api_limit(self, tenant: Tenant) -> int:
        base = API_CALLS_PER_MEMBER * max(1, len(tenant.members))
        return base + OVERAGE_BLOCK * self.overage_blocks[tenant.tenant_id]

    def record_call(self, tenant: Tenant) -> ChargeResult | None:
        """Count one API call; enterprise tenants buy an overage block instead of being cut off."""
        self.api_calls[tenant.tenant_id] += 1
        if self.api_calls[tenant.tenant_id] <= self.api_limit(tenant):
            return None
        if tenant.plan != "enterprise":
            raise QuotaExceeded("API call quota exceeded", tenant=tenant.tenant_id)
        result = legacy_charge(tenant.customer_id, OVERAGE_BLOCK_CENTS, "USD",
                               f"API overage block for {tenant.name}")
        if not result.ok:
            raise QuotaExceeded("API overage could not be paid", tenant=tenant.tenant_id)
        self.overage_blocks[tenant.tenant_id] += 1
        return result

    def buy_member_pack(self, tenant: Tenant, members: int) -> ChargeResult:
        """Pre-pay extra member capacity (sold in packs of 10 at 10 USD per member)."""
        packs = -(-members // 10)
        return legacy_charge(customer_id=tenant.customer_id, amount_cents=packs * 10_000,
                             description=f"{packs} member packs")
