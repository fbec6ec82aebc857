"""Planner: findings -> work units (write set, read set, stable key), lock ranks and waves of units
with disjoint write sets. An SCC of the graph is never split across units.

Public API:

``plan_campaign(repo, campaign, *, graph=None, base_commit=None) -> Plan``
    Index ``repo`` (unless ``graph`` is given), run the campaign's matchers, plan. Read-only.
``plan_findings(graph, findings, campaign, base_commit) -> Plan``
    Plan already-found findings.
``base_tree(repo, base_commit)`` (context manager) -> a directory holding exactly the base
    commit's files: ``repo`` itself when its checkout matches, else a temporary ``git archive``
    export. Index that, not a dirty checkout, or the findings' spans miss in the units'
    worktrees. ``kept_base_tree(repo, base_commit, dest)``: the same, an export kept at ``dest``.
``Plan``: ``campaign``, ``base_commit``, ``findings``, ``units`` (``WorkUnit`` with ``rank`` and
``wave`` set), ``waves`` (unit keys per wave), ``lock_order`` (every leased symbol with its rank,
in acquisition order), ``expected_parallelism``, ``unit(key)``, ``leases(unit)``, ``to_dict()``;
``plan_from_dict(data) -> Plan`` reads ``to_dict()`` back (without the graph).

When the campaign's codemod edits imports (``Campaign.edits_imports``), each unit also
write-leases ``path::<module>`` of its files and a file's findings are one unit.
``containers(symbol)`` are the symbols whose leases contain ``symbol``'s (``<module>`` is not one).
"""

from fleet.plan._plan import Plan, head_commit, plan_campaign, plan_findings, plan_from_dict
from fleet.plan._snapshot import base_tree, kept_base_tree
from fleet.plan._units import (
    ancestors,
    build_units,
    containers,
    lease_requests,
    module_of,
    unit_key,
)
from fleet.plan._waves import assign_waves, expected_parallelism

__all__ = [
    "Plan",
    "ancestors",
    "assign_waves",
    "base_tree",
    "build_units",
    "containers",
    "expected_parallelism",
    "head_commit",
    "kept_base_tree",
    "lease_requests",
    "module_of",
    "plan_campaign",
    "plan_findings",
    "plan_from_dict",
    "unit_key",
]
