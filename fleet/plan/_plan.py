"""``Plan``: one campaign's findings, units, waves and lock order, as a value and as JSON."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.campaigns.matchers import find_findings
from fleet.campaigns.spec import Campaign
from fleet.errors import ConfigError
from fleet.forge._git import head_commit
from fleet.plan._snapshot import base_tree
from fleet.plan._units import MODULE, build_units, lease_requests, unit_key
from fleet.plan._waves import assign_waves, expected_parallelism
from fleet.types import Finding, LeaseRequest, WorkUnit

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

__all__ = ["Plan", "head_commit", "plan_campaign", "plan_findings", "plan_from_dict"]


@dataclass(frozen=True)
class Plan:
    campaign: str
    base_commit: str
    findings: tuple[Finding, ...]
    units: tuple[WorkUnit, ...]
    waves: tuple[tuple[str, ...], ...]
    lock_order: tuple[tuple[str, int], ...]
    max_parallel: int
    expected_parallelism: float
    timings: dict[str, float] = field(default_factory=dict, compare=False)
    graph: SymbolGraph | None = field(default=None, compare=False, repr=False)
    repository: str = ""
    """The store key of the repository planned (its units' ``repository``); ``""``: none."""

    def unit(self, key: str) -> WorkUnit:
        """The unit whose key is ``key`` (or a unique key prefix)."""
        hits = [u for u in self.units if u.key == key] or [
            u for u in self.units if u.key.startswith(key)
        ]
        if len(hits) == 1 and key:
            return hits[0]
        if not self.units:
            raise ConfigError(f"no unit {key!r}: campaign {self.campaign} has no findings and no "
                              f"units at {self.base_commit[:12]}")
        if len(hits) > 1:
            listed = ", ".join(u.key for u in hits[:10])
            more = f" and {len(hits) - 10} more" if len(hits) > 10 else ""
            raise ConfigError(f"unit prefix {key!r} is ambiguous in campaign {self.campaign}: "
                              f"{listed}{more}")
        known = ", ".join(u.key for u in self.units[:10])
        more = f" and {len(self.units) - 10} more" if len(self.units) > 10 else ""
        raise ConfigError(f"no unit {key!r} in campaign {self.campaign} (units: {known}{more})")

    def leases(self, unit: WorkUnit) -> list[LeaseRequest]:
        assert self.graph is not None, "a plan read back from JSON has no graph"
        return lease_requests(self.graph, unit)

    def to_dict(self) -> dict[str, Any]:
        return {
            "campaign": self.campaign,
            "base_commit": self.base_commit,
            "repository": self.repository,
            "summary": {
                "findings": len(self.findings),
                "units": len(self.units),
                "waves": len(self.waves),
                "max_wave": max((len(w) for w in self.waves), default=0),
                "max_parallel": self.max_parallel,
                "expected_parallelism": self.expected_parallelism,
                "seconds": self.timings,
            },
            "findings": [dataclasses.asdict(f) for f in self.findings],
            "units": [
                {
                    "key": u.key,
                    "rank": u.rank,
                    "wave": u.wave,
                    "write_set": list(u.write_set),
                    "read_set": list(u.read_set),
                    "findings": [f.fingerprint for f in u.findings],
                }
                for u in self.units
            ],
            "waves": [list(w) for w in self.waves],
            "lock_order": [[s, r] for s, r in self.lock_order],
        }


def plan_from_dict(data: dict[str, Any]) -> Plan:
    """The inverse of :meth:`Plan.to_dict` (without the graph): what ``fleet plan --json`` wrote,
    or a ``work_units`` asset stored, back as values."""
    findings = tuple(Finding(**f) for f in data["findings"])
    by_fp = {f.fingerprint: f for f in findings}
    units = tuple(
        WorkUnit(
            key=u["key"],
            campaign=data["campaign"],
            base_commit=data["base_commit"],
            write_set=tuple(u["write_set"]),
            read_set=tuple(u["read_set"]),
            findings=tuple(by_fp[fp] for fp in u["findings"]),
            rank=int(u["rank"]),
            wave=int(u["wave"]),
            repository=str(data.get("repository", "")),
        )
        for u in data["units"]
    )
    summary = data["summary"]
    return Plan(
        campaign=data["campaign"],
        base_commit=data["base_commit"],
        findings=findings,
        units=units,
        waves=tuple(tuple(w) for w in data["waves"]),
        lock_order=tuple((s, int(r)) for s, r in data["lock_order"]),
        max_parallel=int(summary["max_parallel"]),
        expected_parallelism=float(summary["expected_parallelism"]),
        timings=dict(summary.get("seconds", {})),
        repository=str(data.get("repository", "")),
    )


def _extra_reads(graph: SymbolGraph, campaign: Campaign) -> list[str]:
    """The new API a fix moves callers onto (``fix.params.new``): every unit relies on it."""
    new = campaign.fix.params.get("new")
    target = graph.resolve_dotted(new) if isinstance(new, str) else None
    return [target] if target else []


def _with_declarations(graph: SymbolGraph, units: list[WorkUnit],
                       campaign: Campaign) -> list[WorkUnit]:
    """``fix.requirements``: every unit also writes the files declaring a moved requirement
    (``pyproject.toml::<module>``), so its patch moves the project's pin with the code it
    migrates and its tests run in the new range. Two such units both write those files, so the
    waves put them one after the other."""
    moves = campaign.fix.requirements
    root = getattr(graph, "root", None)
    if not moves or root is None or not units:
        return units
    from fleet.campaigns.codemods.requirements import declaring_files

    extra = [f"{p}::{MODULE}" for p in declaring_files(Path(root), moves)]
    out = []
    for unit in units:
        write = tuple(sorted(set(unit.write_set) | set(extra)))
        key = unit_key(campaign.name, unit.base_commit, write,
                       [f.fingerprint for f in unit.findings])
        out.append(dataclasses.replace(unit, key=key, write_set=write))
    return out


def plan_findings(
    graph: SymbolGraph,
    findings: list[Finding],
    campaign: Campaign,
    base_commit: str,
    timings: dict[str, float] | None = None,
    *,
    repository: str = "",
) -> Plan:
    """Plan ``findings`` into units at ``base_commit``; ``repository`` (the store key of the
    repository planned, ``fleet.home.store_key``) makes every unit that repository's."""
    started = time.perf_counter()
    units = build_units(
        graph, findings, campaign.name, base_commit, campaign.plan, _extra_reads(graph, campaign),
        edits_imports=campaign.edits_imports, repository=repository,
    )
    units = assign_waves(_with_declarations(graph, units, campaign))
    units.sort(key=lambda u: (u.wave, u.rank, u.key))
    waves: dict[int, list[str]] = {}
    for unit in units:
        waves.setdefault(unit.wave, []).append(unit.key)
    ordered_waves = tuple(tuple(waves[i]) for i in sorted(waves))
    ranks: dict[str, int] = {}
    for unit in units:
        for request in lease_requests(graph, unit):
            ranks[request.symbol] = request.rank
    lock_order = tuple(sorted(ranks.items(), key=lambda item: (item[1], item[0])))
    parallel = campaign.autonomy.max_parallel_agents
    timings = dict(timings or {})
    timings["plan"] = round(time.perf_counter() - started, 3)
    return Plan(
        campaign=campaign.name,
        base_commit=base_commit,
        findings=tuple(findings),
        units=tuple(units),
        waves=ordered_waves,
        lock_order=lock_order,
        max_parallel=parallel,
        expected_parallelism=expected_parallelism([len(w) for w in ordered_waves], parallel),
        timings=timings,
        graph=graph,
        repository=repository,
    )


def plan_campaign(
    repo: str | Path,
    campaign: Campaign,
    *,
    graph: SymbolGraph | None = None,
    base_commit: str | None = None,
    repository: str = "",
) -> Plan:
    """Index (unless given a graph), match and plan. Changes nothing in ``repo``.

    Without a graph, the index is made of the base commit's files: when the checkout has
    uncommitted changes or untracked source files (or another commit is checked out), of an
    export of ``base_commit``, so the findings' lines and spans are those the units start from.
    The returned graph's ``root`` is ``repo``. ``repository``: the store key the units carry
    (see :func:`plan_findings`)."""
    from fleet.graph import index

    root = Path(repo).resolve()
    timings: dict[str, float] = {}
    started = time.perf_counter()
    base = base_commit or head_commit(root)
    if graph is not None:
        findings = find_findings(graph, campaign)
        timings["match"] = round(time.perf_counter() - started, 3)
        return plan_findings(graph, findings, campaign, base, timings, repository=repository)
    with base_tree(root, base) as tree:
        graph = index(tree)
        timings["index"] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()
        findings = find_findings(graph, campaign)
        timings["match"] = round(time.perf_counter() - started, 3)
    graph.root = root
    return plan_findings(graph, findings, campaign, base, timings, repository=repository)
