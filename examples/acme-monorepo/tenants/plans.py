"""The plan catalog: what each plan costs and allows, loaded from YAML."""

from __future__ import annotations

from pathlib import Path

import yaml

from common.errors import NotFound
from tenants.models import PlanModel

BUILTIN_PLANS = [
    PlanModel(name="starter", monthly_cents=900, max_members=5, features=["api"]),
    PlanModel(name="team", monthly_cents=4900, max_members=50, features=["api", "sso"]),
    PlanModel(name="enterprise", monthly_cents=49900, max_members=5000,
              features=["api", "sso", "audit_export", "sub_tenants"]),
]


class PlanCatalog:
    def __init__(self, plans: list[PlanModel]) -> None:
        self._plans = {plan.name: plan for plan in plans}

    def get(self, name: str) -> PlanModel:
        try:
            return self._plans[name]
        except KeyError:
            raise NotFound(f"no plan named {name!r}", plan=name) from None

    def names(self) -> list[str]:
        return sorted(self._plans)

    def allows(self, plan: str, feature: str) -> bool:
        return feature in self.get(plan).features

    def to_json(self) -> str:
        return "[" + ",".join(self._plans[n].json() for n in self.names()) + "]"


def load_catalog(path: str | Path) -> PlanCatalog:
    """Read ``plans: [...]`` from a YAML file."""
    with open(path, encoding="utf-8") as fh:
        data = yaml.load(fh)
    return PlanCatalog([PlanModel.parse_obj(entry) for entry in data.get("plans", [])])


def parse_catalog(text: str) -> PlanCatalog:
    """Parse a catalog given inline (used by the admin API's dry-run)."""
    data = yaml.load(text) or {}
    return PlanCatalog([PlanModel.parse_obj(entry) for entry in data.get("plans", [])])


default_catalog = PlanCatalog(BUILTIN_PLANS)
