"""The fleet calls behind the asset bodies, one function per asset: each opens what it needs
from the resources and calls into ``fleet``. Kept in one module so the asset definitions stay a few
lines each and the wiring to the domain core is in one place."""

from __future__ import annotations

import dataclasses
import logging
import shutil
import subprocess
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagster import MetadataValue

from assets._metadata import link
from assets._modules import module_summary, save_summary
from assets._seams import AgentSource, ForgeSource, SandboxSource, StoreSource
from fleet.errors import ConfigError
from fleet.integrate import IntegrationResult, SelfMerge, fast_forward, pytest_runner
from fleet.integrate import integrate as integrate_patches
from fleet.types import ChangeRef, Finding, WorkUnit
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, latest_results, record_planned
from fleet.verify import GateOptions

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

GRAPH_FILE = "symbol_graph.json"
MAX_ISSUE_LINKS = 50
log = logging.getLogger(__name__)


def graph_dir(home: Path) -> Path:
    return home / "graph"


def head_commit(repo: Path, ref: str = "HEAD") -> str:
    return subprocess.run(["git", "rev-parse", ref], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def branch_commit(repo: Path, branch: str) -> str:
    """The commit at the head of ``branch`` in ``repo``. A branch (or repository) git does not
    know is a :class:`ConfigError` naming both, not a ``CalledProcessError`` from deep inside a
    step: the base branch comes from ``FLEET_BASE_BRANCH`` or the repository's checkout."""
    if not repo.is_dir():
        raise ConfigError(f"the repository {repo} does not exist (base branch {branch!r})")
    done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}"],
                          cwd=repo, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        detail = done.stderr.strip().splitlines()[0] if done.stderr.strip() else ""
        raise ConfigError(
            f"base branch {branch!r} does not exist in the repository {repo}"
            + (f" ({detail})" if detail else "")
            + "; set FLEET_BASE_BRANCH to one of its branches (e.g. the checked-out one)")
    return done.stdout.strip()


def base_source(repo: Path, home: Path, commit: str) -> Path:
    """The directory whose files are exactly ``commit``'s, for the index and the matchers:
    ``repo`` itself when its checkout is that commit with no local change, else an export kept
    under ``<home>/graph/base-tree`` (re-exported when the commit changes). Units start from the
    base commit, so findings and spans must come from it, never from uncommitted edits; the
    export is kept (not a temporary) because ``find`` and ``plan`` read the graph's sources
    later, and a stable root keeps the next index incremental. ``repo`` is never modified."""
    from fleet.plan import base_tree

    dest = graph_dir(home) / "base-tree"
    stamp = graph_dir(home) / "base-tree.commit"
    if dest.is_dir() and stamp.is_file() and stamp.read_text() == commit:
        return dest
    with base_tree(repo, commit) as tree:
        if tree == repo:
            return repo
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(tree, dest)  # out of the temporary directory base_tree removes
    stamp.write_text(commit)
    return dest


def index(repo: Path, home: Path, base: str = "HEAD") -> dict[str, Any]:
    """Index the files of ``base`` (a branch or commit of ``repo``: its checkout only when that
    holds exactly them, else an export, see :func:`base_source`) incrementally from the saved
    graph; save graph + module summary. A saved graph that cannot be loaded (older snapshot
    format, corrupt file) is logged as a warning and replaced by a full index."""
    from fleet.graph import SnapshotError, SymbolGraph
    from fleet.graph import index as index_repo

    repo = repo.resolve()
    commit = branch_commit(repo, base)
    path = graph_dir(home) / GRAPH_FILE
    previous = None
    if path.exists():
        try:
            previous = SymbolGraph.load(path)
        except SnapshotError as exc:  # an older format or a damaged file: index from scratch
            log.warning("ignoring the saved symbol graph %s (%s); doing a full index", path, exc)
    source = base_source(repo, home, commit)
    graph = index_repo(source, previous)
    path.parent.mkdir(parents=True, exist_ok=True)
    graph.save(path)
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


def load_graph(home: Path) -> SymbolGraph:
    from fleet.graph import SymbolGraph

    path = graph_dir(home) / GRAPH_FILE
    if not path.exists():
        raise ConfigError(f"{path}: no symbol graph yet; materialize symbol_graph first")
    return SymbolGraph.load(path)


def find(campaign: str, repo: Path, home: Path, store: StoreSource,
         forge: ForgeSource | None = None) -> FindReport:
    """Match the campaign over the saved graph; record the findings (new / known) in the store
    and mark the open ones no longer found as fixed. With ``forge``, file every open (new or
    known) finding that has no issue yet, exactly once across sweeps and processes: the store's
    record names the issue once filed (``file_new_findings``) and the forge's ``file_issue`` is
    idempotent per fingerprint. Suppressed and fixed findings are never filed."""
    from fleet.campaigns.findings import file_new_findings, sync_findings
    from fleet.campaigns.matchers import find_findings
    from fleet.campaigns.spec import load_campaign

    findings = find_findings(load_graph(home), load_campaign(campaign))
    opened = store.store()
    lifecycle = sync_findings(opened.findings, campaign, findings)
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


def plan(campaign: str, repo: Path, home: Path, base_branch: str, store: StoreSource,
         only_paths: Sequence[str] | None = None) -> PlanReport:
    """Plan the campaign's open findings (in ``only_paths`` when given) into units on the head
    of ``base_branch``; every unit is recorded in the ledger (``unit.planned``) once."""
    from fleet.campaigns.matchers import find_findings
    from fleet.campaigns.spec import load_campaign
    from fleet.plan import plan_findings

    spec = load_campaign(campaign)
    graph = load_graph(home)
    open_fps = {r.finding.fingerprint for r in store.store().findings.list(campaign)
                if r.status in ("new", "known")}
    findings = [f for f in find_findings(graph, spec) if f.fingerprint in open_fps
                and (only_paths is None or f.path in only_paths)]
    result = plan_findings(graph, findings, spec, branch_commit(repo, base_branch))
    new = record_planned(store.ledger(), result.units)
    return PlanReport(units=result.units, waves=len(result.waves), extra={
        "new_units": new, "expected_parallelism": round(result.expected_parallelism, 2),
        "max_parallel": result.max_parallel, "base_commit": result.base_commit})


def unit_env(campaign: str, repo: Path, home: Path, store: StoreSource, sandbox: SandboxSource,
             agent: AgentSource) -> UnitEnv:
    """Real worktrees, the campaign's agent, the gates over the saved graph, the store's leases,
    ledger and kill switch, and lease ranks from the graph."""
    from fleet.campaigns.spec import load_campaign
    from fleet.plan import lease_requests

    spec = load_campaign(campaign)
    graph = load_graph(home)
    opened = store.store()
    return UnitEnv(
        leases=opened.leases, ledger=opened.ledger, agent=agent.open(spec, graph, opened),
        sandbox=sandbox.open(), workspaces=GitWorkspaces(repo),
        gates=VerifyGates(repo, graph, GateOptions(campaign=campaign), spec), budget=spec.budget,
        killed=opened.controls.engaged, requests=lambda unit: lease_requests(graph, unit),
    )


def integrate(campaign: str, repo: Path, home: Path, base_branch: str, store: StoreSource,
              sandbox: SandboxSource, planned: Collection[str] | None = None
              ) -> IntegrationResult:
    """Integrate the campaign's verified units onto ``base_branch``: with ``planned`` (the
    current plan's unit keys), only those - a unit that a re-plan superseded keeps its ledger
    record but its patch leaves the integration branch."""
    results = [r for r in latest_results(store.ledger(), campaign).values()
               if r.status == "verified" and (planned is None or r.unit in planned)]
    return integrate_patches(
        repo, results, base_branch=base_branch, branch=f"fleet/{campaign}/integration",
        leases=store.leases(), ledger=store.ledger(), run_tests=pytest_runner(sandbox.open()),
    )


@dataclass(frozen=True)
class Handover:
    ref: ChangeRef
    self_merge: SelfMerge | None = None
    self_merge_message: str = ""


def publish(campaign: str, repo: Path, base_branch: str, store: StoreSource, forge: ForgeSource
            ) -> Handover | None:
    """Hand the last integration branch over through the forge (``None`` if nothing merged);
    with a campaign whose autonomy is ``self_merge``, also fast-forward the base branch when the
    combination passed its tests (every merged unit passed every gate to get there), see
    :func:`self_merge`; the outcome, merged or not, is a ``change.self_merge`` ledger event
    whose ``message`` says what moved or why nothing did."""
    from fleet.campaigns.spec import load_campaign

    ledger = store.ledger()
    done = ledger.events(kind="integration.finished", campaign=campaign)
    if not done or not done[-1].payload.get("merged"):
        return None
    last = done[-1].payload
    results = latest_results(ledger, campaign)
    lines = [f"Campaign `{campaign}`: {len(last['merged'])} unit(s) merged on `{last['base']}`.",
             ""]
    for key in last["merged"]:
        r = results.get(key)
        if r is None:
            continue
        gates = ", ".join(f"{v.gate}={v.status}" for v in r.verdicts)
        lines.append(f"- unit `{key}` ({', '.join(r.paths)}): {gates}")
    for key in last.get("semantic_conflicts", []):
        lines.append(f"- unit `{key}`: dropped (semantic conflict), requeued")
    branch = str(last["branch"])
    ref = forge.open(store.store()).publish(str(repo), branch, f"fleet: {campaign}",
                                            "\n".join(lines), labels=("fleet", campaign))
    ledger.append("pull_request.published", {"ref": dataclasses.asdict(ref),
                  "units": list(last["merged"])}, campaign=campaign, actor="forge")
    if load_campaign(campaign).autonomy.mode != "self_merge":
        return Handover(ref)
    merge, checkout = self_merge(repo, base_branch, branch, last)
    message = self_merge_message(merge, base_branch, branch, checkout)
    ledger.append("change.self_merge", {
        **dataclasses.asdict(merge), "base_branch": base_branch, "branch": branch,
        "checkout": str(checkout or ""), "message": message,
    }, campaign=campaign, actor="forge")
    return Handover(ref, merge, message)


def checked_out_in(repo: Path, branch: str) -> Path | None:
    """The worktree of ``repo`` (the main checkout or a linked one) that has ``branch`` checked
    out, or ``None``."""
    out = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    current: Path | None = None
    for line in out.splitlines():
        if line.startswith("worktree "):
            current = Path(line.split(" ", 1)[1])
        elif line == f"branch refs/heads/{branch}":
            return current
    return None


def self_merge(repo: Path, base_branch: str, branch: str, last: dict[str, Any]
               ) -> tuple[SelfMerge, Path | None]:
    """Fast-forward ``base_branch`` to the integration ``branch`` when the combination's tests
    passed. Where the base branch is checked out, that checkout must have no uncommitted change
    (else nothing moves) and its files are updated with the branch (``git merge --ff-only``);
    where it is checked out nowhere, only the ref moves. Returns the outcome and the checkout."""
    from fleet.errors import GitError

    checkout = checked_out_in(repo, base_branch)
    if not last.get("tests_passed"):
        why = ("the combination's tests were not run" if last.get("tests_passed") is None
               else "the combination's tests fail")
        new = last.get("new_failures") or []
        if last.get("tests_passed") is False and last.get("base_tests_passed") is False:
            why += (f" ({len(new)} new failure(s); the base fails on its own)" if new
                    else " (no new failure: the base fails on its own)")
        return SelfMerge(False, why), checkout
    if last.get("tests_collected") == 0:
        return SelfMerge(False, "the combination's test run collected no test: nothing "
                                "checked it"), checkout
    try:
        return fast_forward(repo, base_branch, branch), checkout
    except GitError as exc:  # e.g. an untracked file in the checkout the merge would overwrite
        return SelfMerge(False, f"git refused the fast-forward: {str(exc).strip()[:300]}"), checkout


def self_merge_message(merge: SelfMerge, base_branch: str, branch: str,
                       checkout: Path | None) -> str:
    """One line for the user: what moved (the branch, the checkout's files) or why nothing did."""
    if merge.merged and checkout is not None:
        return (f"fast-forwarded {base_branch} to {merge.head[:10]}; its checkout {checkout} "
                f"was updated too (git merge --ff-only)")
    if merge.merged:
        return (f"fast-forwarded {base_branch} to {merge.head[:10]} (ref only: {base_branch} "
                f"is not checked out, no files changed)")
    if merge.reason == "already merged":
        return f"{base_branch} already at {branch}"
    return f"not merged: {merge.reason}; the change stays on {branch}"
