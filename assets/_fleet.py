"""The fleet calls behind the asset bodies, one function per asset: each opens what it needs
from the resources and calls into ``fleet``. Kept in one module so the asset definitions stay a few
lines each and the wiring to the domain core is in one place."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagster import MetadataValue

from assets._metadata import link
from assets._modules import module_summary, save_summary
from assets._seams import AgentSource, ForgeSource, SandboxSource, StoreSource
from fleet.errors import ConfigError
from fleet.forge import branch_commit
from fleet.integrate import (
    Handover,
    IntegrationResult,
    SelfMerge,
    handover,
    pytest_runner,
    self_merge_locally,
)
from fleet.integrate import integrate as integrate_patches
from fleet.types import Finding, WorkUnit
from fleet.unit import (
    GitWorkspaces,
    UnitEnv,
    VerifyGates,
    latest_results,
    ledger_repository,
    record_planned,
)
from fleet.verify import GateOptions

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign
    from fleet.graph import SymbolGraph

__all__ = [
    "GRAPH_FILE",
    "MAX_ISSUE_LINKS",
    "FindReport",
    "PlanReport",
    "base_source",
    "find",
    "graph_dir",
    "index",
    "integrate",
    "load_graph",
    "plan",
    "publish",
    "self_merge",
    "unit_env",
]

GRAPH_FILE = "symbol_graph.json"
MAX_ISSUE_LINKS = 50
log = logging.getLogger(__name__)


def graph_dir(home: Path) -> Path:
    return home / "graph"


def base_source(repo: Path, home: Path, commit: str) -> Path:
    """The directory whose files are exactly ``commit``'s, for the index and the matchers
    (``fleet.plan.kept_base_tree``: the checkout, else an export under ``<home>/graph``)."""
    from fleet.plan import kept_base_tree

    return kept_base_tree(repo, commit, graph_dir(home) / "base-tree")


def index(repo: Path, home: Path, base: str = "HEAD") -> dict[str, Any]:
    """Index the files of ``base`` (a branch or commit of ``repo``: its checkout only when that
    holds exactly them, else an export, see :func:`base_source`) incrementally from the saved
    graph; save graph + module summary. A saved graph that cannot be loaded (older snapshot
    format, corrupt file, another repository's) is logged as a warning and replaced by a full
    index of this repository."""
    from fleet.graph import SnapshotError, SymbolGraph
    from fleet.graph import index as index_repo
    from fleet.home import store_key

    repo = repo.resolve()
    commit = branch_commit(repo, base)
    path = graph_dir(home) / GRAPH_FILE
    key = store_key(home, repo)
    previous = None
    if path.exists():
        try:
            previous = SymbolGraph.load(path, repository=key)
        except SnapshotError as exc:  # an older format or a damaged file: index from scratch
            log.warning("ignoring the saved symbol graph %s (%s); doing a full index", path, exc)
    source = base_source(repo, home, commit)
    graph = index_repo(source, previous)
    path.parent.mkdir(parents=True, exist_ok=True)
    graph.save(path, repository=key)
    summary = module_summary(graph)
    save_summary(summary, graph_dir(home))
    stats = {k: v for k, v in graph.stats().items() if isinstance(v, int | float | str)}
    return {**stats, "modules": len(summary["modules"]),
            "rolled_up_depth": summary["rolled_up_depth"] or 0,
            "resolved_share": round(float(graph.resolved_share()), 4),
            "commit": commit, "indexed": "checkout" if source == repo else "export of the base"}


@dataclass(frozen=True)
class FindReport:
    findings: tuple[Finding, ...]
    new: int = 0
    known: int = 0
    fixed: int = 0
    filed: int = 0
    already_filed: int = 0
    issues: tuple[str, ...] = ()

    def metadata(self) -> dict[str, Any]:
        from fleet.forge import issue_links

        links = issue_links(self.issues, MAX_ISSUE_LINKS)
        return {"findings": len(self.findings), "new": self.new, "known": self.known,
                "fixed": self.fixed,
                "rules": ", ".join(sorted({f.rule for f in self.findings})),
                "issues_filed": self.filed, "issues_already_filed": self.already_filed,
                "issue_links": MetadataValue.md(links or "none filed in this sweep"),
                **({"last_issue": link(self.issues[-1])} if self.issues else {})}


@dataclass(frozen=True)
class PlanReport:
    units: tuple[WorkUnit, ...]
    waves: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        return {"units": len(self.units), "waves": self.waves,
                "findings": sum(len(u.findings) for u in self.units), **self.extra}


def load_graph(home: Path, repo: Path | None = None, base: str = "HEAD") -> SymbolGraph:
    """The saved graph. A worker's mirror of a remote (``fleet.forge.remote``) that has none
    yet indexes ``base`` itself: workers share no files, and the graph is derived from git."""
    from fleet.forge.remote import push_remote
    from fleet.graph import SymbolGraph
    from fleet.locks import hold

    path = graph_dir(home) / GRAPH_FILE
    if not path.exists() and repo is not None and push_remote(repo) is not None:
        with hold(home / "locks" / "index.lock", f"indexing {repo}"):
            if not path.exists():
                index(repo, home, base)
    if not path.exists():
        raise ConfigError(f"{path}: no symbol graph yet; materialize symbol_graph first")
    if repo is None:
        return SymbolGraph.load(path)
    from fleet.home import store_key

    return SymbolGraph.load(path, repository=store_key(home, repo.resolve()))  # never another's


def find(campaign: Campaign, repo: Path, home: Path, store: StoreSource,
         forge: ForgeSource | None = None) -> FindReport:
    """Match the campaign over the saved graph; record the findings (new / known) in the store
    and mark the open ones no longer found as fixed. With ``forge``, file every open (new or
    known) finding that has no issue yet, exactly once across sweeps and processes: the store's
    record names the issue once filed (``file_new_findings``) and the forge's ``file_issue`` is
    idempotent per fingerprint. Suppressed and fixed findings are never filed."""
    from fleet.campaigns.findings import file_new_findings, sync_findings
    from fleet.campaigns.matchers import find_findings

    findings = find_findings(load_graph(home, repo), campaign)
    opened = store.store()
    lifecycle = sync_findings(opened.findings, campaign.name, findings)
    report = FindReport(findings=tuple(findings), new=len(lifecycle.new),
                        known=len(lifecycle.known), fixed=len(lifecycle.fixed))
    if forge is None:
        return report
    open_fps = set(lifecycle.new) | set(lifecycle.known)
    to_file = [f for f in findings if f.fingerprint in open_fps]
    handle = forge.open(opened)
    try:
        refs = file_new_findings(handle, to_file, opened.findings)
    finally:
        close = getattr(handle, "close", None)  # GitHubForge holds an HTTP session
        if callable(close):
            close()
    filed = sum(1 for r in refs if r.created)
    return dataclasses.replace(report, filed=filed, already_filed=len(to_file) - filed,
                               issues=tuple(r.url for r in refs))


def plan(campaign: Campaign, repo: Path, home: Path, base_branch: str, store: StoreSource,
         only_paths: Sequence[str] | None = None) -> PlanReport:
    """Plan the campaign's open findings (in ``only_paths`` when given) into units on the head
    of ``base_branch``; every unit is recorded in the ledger (``unit.planned``) once."""
    from fleet.campaigns.matchers import find_findings
    from fleet.plan import plan_findings

    spec = campaign
    graph = load_graph(home, repo, base_branch)
    open_fps = {r.finding.fingerprint for r in store.store().findings.list(campaign.name)
                if r.status in ("new", "known")}
    findings = [f for f in find_findings(graph, spec) if f.fingerprint in open_fps
                and (only_paths is None or f.path in only_paths)]
    ledger = store.ledger()
    result = plan_findings(graph, findings, spec, branch_commit(repo, base_branch),
                           repository=ledger_repository(ledger))  # the store's repository's
    new = record_planned(ledger, result.units)
    return PlanReport(units=result.units, waves=len(result.waves), extra={
        "new_units": new, "expected_parallelism": round(result.expected_parallelism, 2),
        "max_parallel": result.max_parallel, "base_commit": result.base_commit})


def unit_env(campaign: Campaign, repo: Path, home: Path, store: StoreSource, sandbox: SandboxSource,
             agent: AgentSource) -> UnitEnv:
    """Real worktrees, the campaign's agent, the gates over the saved graph, the store's leases,
    ledger and kill switch, and lease ranks from the graph."""
    from fleet.plan import lease_requests

    spec = campaign
    graph = load_graph(home, repo)
    opened = store.store()
    workspaces = GitWorkspaces(repo)  # in a worker's mirror, verified units are pushed
    return UnitEnv(
        leases=opened.leases, ledger=opened.ledger, agent=agent.open(spec, graph, opened),
        sandbox=sandbox.open(), workspaces=workspaces, publish=workspaces.publish,
        gates=VerifyGates(repo, graph, GateOptions(campaign=campaign.name), spec),
        budget=spec.budget, campaign=spec,
        killed=opened.controls.engaged, requests=lambda unit: lease_requests(graph, unit),
        ttl_s=store.lease_ttl_s,
    )


def integrate(campaign: Campaign | str, repo: Path, home: Path, base_branch: str,
              store: StoreSource, sandbox: SandboxSource,
              planned: Collection[str] | None = None) -> IntegrationResult:
    """Integrate the campaign's verified units onto ``base_branch``: with ``planned`` (the
    current plan's unit keys), only those - a unit that a re-plan superseded keeps its ledger
    record but its patch leaves the integration branch. ``campaign``: the loaded one (its
    verdicts are current for it), or a name loaded once."""
    name = campaign if isinstance(campaign, str) else campaign.name
    results = [r for r in latest_results(store.ledger(), campaign).values()
               if r.status == "verified" and (planned is None or r.unit in planned)]
    return integrate_patches(
        repo, results, base_branch=base_branch, branch=f"fleet/{name}/integration",
        leases=store.leases(), ledger=store.ledger(), run_tests=pytest_runner(sandbox.open()),
    )


def publish(campaign: Campaign, repo: Path, base_branch: str, store: StoreSource,
            forge: ForgeSource) -> Handover | None:
    """Hand the campaign's last integration over through the forge and self-merge through it
    when the campaign allows (``fleet.integrate.handover``), with the issues filed for its
    units' findings."""
    opened = store.store()
    issues = {r.finding.fingerprint: r.issue_ref for r in opened.findings.list(campaign.name)
              if r.issue_ref}
    handle = forge.open(opened)
    try:
        return handover(campaign, repo, base_branch, store.ledger(), handle, issues)
    finally:
        close = getattr(handle, "close", None)  # GitHubForge holds an HTTP session
        if callable(close):
            close()


def self_merge(repo: Path, base_branch: str, branch: str, last: dict[str, Any]
               ) -> tuple[SelfMerge, Path | None]:
    """The local forge's self-merge policy and fast-forward (``fleet.integrate``)."""
    return self_merge_locally(repo, base_branch, branch, last)
