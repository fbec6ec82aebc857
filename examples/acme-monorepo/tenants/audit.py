"""The tenant audit trail: who did what, when, in which tenant."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime as DT


@dataclass(frozen=True)
class AuditEntry:
    tenant_id: str
    actor: str
    action: str
    details: dict = field(default_factory=dict)
    at: DT = field(default_factory=lambda: DT.utcnow())


class AuditLog:
    """Append-only entries per tenant, newest last."""

    def __init__(self) -> None:
        self._entries: list[AuditEntry] = []

    def record(self, tenant_id: str, actor: str, action: str, **details: object) -> AuditEntry:
        entry = AuditEntry(tenant_id, actor, action, dict(details))
        self._entries.append(entry)
        return entry

    def for_tenant(self, tenant_id: str) -> list[AuditEntry]:
        return [e for e in self._entries if e.tenant_id == tenant_id]

    def actions(self, tenant_id: str) -> list[str]:
        return [e.action for e in self.for_tenant(tenant_id)]

    def export(self, tenant_id: str) -> list[dict]:
        """Entries as JSON-ready dicts, stamped with the export time."""
        exported_at = DT.utcnow().isoformat()
        return [
            {"actor": e.actor, "action": e.action, "details": e.details,
             "at": e.at.isoformat(), "exported_at": exported_at}
            for e in self.for_tenant(tenant_id)
        ]


audit_log = AuditLog()
