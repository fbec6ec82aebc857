"""Role-based permissions. Roles and their permissions are data (``config/policies.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

BUILTIN_POLICIES = """
roles:
  owner: ["*"]
  admin: [tenant.read, tenant.update, members.read, members.invite, members.remove,
          billing.read, billing.charge]
  member: [tenant.read, members.read]
  billing: [tenant.read, billing.read, billing.charge, billing.refund]
inherits:
  owner: admin
"""


@dataclass(frozen=True)
class Policy:
    """Permissions per role, after inheritance. ``*`` grants everything."""

    roles: dict[str, frozenset[str]]

    def allows(self, role: str | None, permission: str) -> bool:
        if role is None:
            return False
        granted = self.roles.get(role, frozenset())
        if "*" in granted or permission in granted:
            return True
        prefix = permission.split(".", 1)[0] + ".*"
        return prefix in granted

    def known_roles(self) -> list[str]:
        return sorted(self.roles)


def parse_policies(text: str) -> Policy:
    data = yaml.load(text, Loader=yaml.SafeLoader) or {}
    roles = {name: set(perms or []) for name, perms in data.get("roles", {}).items()}
    for child, parent in (data.get("inherits") or {}).items():
        roles.setdefault(child, set()).update(roles.get(parent, set()))
    return Policy({name: frozenset(perms) for name, perms in roles.items()})


def load_policies(path: str | Path | None = None) -> Policy:
    """Policies from ``path``, or the built-in ones."""
    if path is None:
        return parse_policies(BUILTIN_POLICIES)
    return parse_policies(Path(path).read_text(encoding="utf-8"))


default_policy = load_policies()
