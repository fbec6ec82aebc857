"""The life of one work unit: leases -> workspace -> agent (in the sandbox) -> gates -> ledger.

Failure semantics:

- leases are taken all-or-nothing in ``(rank, symbol)`` order within a deadline; refused ->
  ``lease_refused`` (the caller backs off with jitter and requeues);
- a heartbeat thread renews the leases while the unit runs; if the process dies, the heartbeat
  stops, the leases expire after their TTL and the unit, never recorded as finished, is planned
  again by the next run (and a late integration of its patch is refused by the fencing token);
- a failed agent leaves the repository untouched: it only ever wrote in its own worktree, which
  is removed; only a verified patch is committed, on the unit's own branch.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.agents.rollback import step_recorder
from fleet.backoff import backoff_s as jittered_backoff
from fleet.errors import FleetError
from fleet.forge._git import git
from fleet.protocols import DEFAULT_LEASE_TTL_S, Agent, Gates, LeaseStore, Ledger, Workspaces
from fleet.types import (
    Acquired,
    AgentOutcome,
    Budget,
    Cost,
    LeaseRequest,
    StopReason,
    Workspace,
    WorkUnit,
)
from fleet.unit._records import UnitResult, check_own, record_result, settle, stamp_judged_with

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign
    from sandbox import Sandbox

__all__ = [
    "UnitEnv",
    "commit_workspace",
    "lease_requests",
    "repo_untouched",
    "run_unit",
    "run_units",
]

@dataclass(frozen=True)
class UnitEnv:
    """Everything one unit run needs, wired by the caller (the asset, or ``fleet fix``)."""

    leases: LeaseStore
    ledger: Ledger
    agent: Agent
    sandbox: Sandbox
    workspaces: Workspaces
    gates: Gates
    budget: Budget = field(default_factory=Budget)
    killed: Callable[[], bool] = lambda: False
    ttl_s: float = DEFAULT_LEASE_TTL_S
    deadline_s: float = 45.0
    holder_prefix: str = "fleet"
    requests: Callable[[WorkUnit], list[LeaseRequest]] | None = None
    """The unit's leases with per-symbol lock ranks (``fleet.plan.lease_requests`` over the
    graph); default: every symbol at the unit's rank."""
    publish: Callable[[Workspace, str], str | None] | None = None
    """Where a verified unit's commit goes beyond its own branch (``GitWorkspaces.publish``:
    the worker's remote); returns ``None`` once published, else why not, and the unit is then
    ``push_failed`` (not terminal: it runs again). ``None``: the branch stays local."""
    campaign: Campaign | None = None
    """The loaded campaign the units run with: their verdicts name its version and gate set
    (``stamp_judged_with``); ``None``: the campaign a unit names is loaded for it."""


def lease_requests(unit: WorkUnit) -> list[LeaseRequest]:
    """Write leases on the write set, read leases on the rest of the read set, in rank order."""
    writes = set(unit.write_set)
    reqs = [LeaseRequest(s, "write", unit.rank) for s in unit.write_set]
    reqs += [LeaseRequest(s, "read", unit.rank) for s in unit.read_set if s not in writes]
    return sorted(reqs, key=lambda r: (r.rank, r.symbol))


def commit_workspace(workspace: Workspace, message: str) -> str:
    """Commit everything in the worktree on its branch; returns the commit id."""
    git(workspace.path, "add", "-A")
    git(workspace.path, "commit", "-q", "--no-verify", "-m", message)
    return git(workspace.path, "rev-parse", "HEAD").strip()


class _Heartbeat:
    def __init__(self, leases: LeaseStore, holder: str, ttl_s: float) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(leases, holder, ttl_s), daemon=True, name=f"hb-{holder}"
        )
        self._thread.start()

    def _beat(self, leases: LeaseStore, holder: str, ttl_s: float) -> None:
        while not self._stop.wait(ttl_s / 3):
            leases.renew(holder, ttl_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_unit(unit: WorkUnit, env: UnitEnv, worker: str = "w0") -> UnitResult:
    """Run one unit end to end and append its ``unit.finished`` event to the ledger.

    Never raises for an expected outcome (refused leases, failed agent, rejecting gate): those are
    the returned ``UnitResult.status``. Infrastructure faults propagate as ``FleetError``s, with the
    leases released and the worktree removed. A unit of another repository than the one
    ``env.ledger`` is scoped to is refused before anything is leased (``ForeignUnit``).
    """
    check_own(env.ledger, unit, "running it")
    started = time.perf_counter()
    base = UnitResult(unit=unit.key, campaign=unit.campaign, status="killed",
                      base_commit=unit.base_commit, rank=unit.rank, paths=unit.paths)
    holder = f"{env.holder_prefix}:{worker}:{unit.key}"
    actor = f"unit:{worker}"
    if env.killed():
        return _finish(env, replace(base, detail="kill switch engaged"), actor, started)
    requests = env.requests(unit) if env.requests is not None else lease_requests(unit)
    acquired = env.leases.acquire_all(holder, unit.key, requests, env.ttl_s, env.deadline_s)
    if not isinstance(acquired, Acquired):
        env.ledger.append("unit.lease_refused", {"reason": acquired.reason,
                          "blocking": [list(b) for b in acquired.blocking]},
                          unit=unit.key, campaign=unit.campaign, actor=actor)
        return replace(base, status="lease_refused", detail=acquired.reason,
                       wall_s=time.perf_counter() - started)
    env.ledger.append("lease.granted", {"grants": [[g.symbol, g.mode, g.token]
                      for g in acquired.grants]}, unit=unit.key, campaign=unit.campaign,
                      actor=actor)
    heartbeat = _Heartbeat(env.leases, holder, env.ttl_s)
    try:
        return _finish(env, _work(unit, env, acquired, actor, base), actor, started)
    finally:
        heartbeat.stop()
        env.leases.release(holder)


def _work(unit: WorkUnit, env: UnitEnv, acquired: Acquired, actor: str,
          base: UnitResult) -> UnitResult:
    workspace = env.workspaces.create(unit)
    keep_branch = False
    try:
        t0 = time.perf_counter()
        outcome = _run_agent(env.agent, unit, workspace, env)
        agent_s = time.perf_counter() - t0
        common = replace(base, grants=acquired.grants, cost=outcome.cost, patch=outcome.patch,
                         stop_reason=str(outcome.stop_reason), agent_s=agent_s,
                         branch=workspace.branch)
        env.ledger.append("agent.finished", {"agent": env.agent.name,
                          "stop_reason": str(outcome.stop_reason), "steps": len(outcome.steps),
                          "detail": outcome.detail, "tokens": outcome.cost.tokens},
                          unit=unit.key, campaign=unit.campaign, actor=actor)
        if not outcome.ok:
            return replace(common, status="agent_failed",
                           detail=outcome.detail or str(outcome.stop_reason))
        t1 = time.perf_counter()
        verdicts = tuple(env.gates(unit, workspace, outcome, env.sandbox))
        gates_s = time.perf_counter() - t1
        for v in verdicts:
            env.ledger.append("gate.verdict", {"gate": v.gate, "status": v.status,
                              "evidence": v.evidence[:4000]}, unit=unit.key,
                              campaign=unit.campaign, actor=f"gate:{v.gate}")
        if verdicts and all(v.passed for v in verdicts):
            commit = commit_workspace(workspace, f"fleet({unit.campaign}): unit {unit.key}")
            keep_branch = True
            unpublished = env.publish(workspace, commit) if env.publish is not None else None
            if unpublished is not None:
                env.ledger.append("unit.push_failed", {"reason": unpublished, "commit": commit},
                                  unit=unit.key, campaign=unit.campaign, actor=actor)
                return replace(common, status="push_failed", commit=commit, verdicts=verdicts,
                               gates_s=gates_s, detail=unpublished)
            status, detail, left = settle(unit, outcome.patch)  # partial: findings left
            return replace(common, status=status, commit=commit, verdicts=verdicts,
                           gates_s=gates_s, detail=detail, left=left)
        failed = next((v for v in verdicts if not v.passed), None)
        detail = f"{failed.gate}: {failed.evidence[:500]}" if failed else "no gate ran"
        return replace(common, status="rejected", verdicts=verdicts, gates_s=gates_s,
                       detail=detail)
    finally:
        env.workspaces.remove(workspace, keep_branch=keep_branch)


def _run_agent(agent: Agent, unit: WorkUnit, workspace: Workspace, env: UnitEnv) -> AgentOutcome:
    """The agent's outcome; an exception that is not a FleetError (a bug in the agent, a file it
    could not decode) ends only this unit, as ``agent_failed`` naming the exception, never the
    batch. The worktree is removed by the caller, so the repository stays untouched."""
    recorder = step_recorder(env.ledger, unit.key, unit.campaign, unit.base_commit)
    try:
        if _takes_on_step(agent):
            return agent.run(unit, workspace, env.sandbox, env.budget, on_step=recorder)
        outcome = agent.run(unit, workspace, env.sandbox, env.budget)
        if outcome.steps:  # after the fact: only the last step's diff is known
            recorder(outcome.steps[-1], outcome.patch)
        return outcome
    except FleetError:
        raise
    except Exception as exc:
        return AgentOutcome(patch="", steps=(), cost=Cost(), stop_reason=StopReason.ERROR,
                            detail=f"agent raised {type(exc).__name__}: {exc}"[:2000])


def _takes_on_step(agent: Agent) -> bool:
    """An agent written against the protocol before ``on_step`` was one of its parameters
    (``run(unit, workspace, sandbox, budget)``) still runs; its steps are recorded after it."""
    try:
        params = inspect.signature(agent.run).parameters
    except (TypeError, ValueError):
        return True
    return "on_step" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _finish(env: UnitEnv, result: UnitResult, actor: str, started: float) -> UnitResult:
    result = stamp_judged_with(replace(result, wall_s=time.perf_counter() - started),
                               env.campaign)
    record_result(env.ledger, result, actor)
    return result


def run_units(
    units: Sequence[WorkUnit],
    env: UnitEnv,
    parallel: int = 1,
    attempts: int = 3,
    backoff_s: float = 0.5,
    on_result: Callable[[UnitResult], None] | None = None,
) -> list[UnitResult]:
    """Run ``units`` concurrently, at most ``parallel`` at once (the ``agent_sandbox`` pool).

    A unit whose leases are refused is retried up to ``attempts`` times after an exponential
    backoff with random jitter; results come back in the order of ``units``.
    """

    def one(index: int, unit: WorkUnit) -> UnitResult:
        worker = f"w{index % max(parallel, 1)}"
        for attempt in range(attempts):
            result = run_unit(unit, env, worker)
            if result.status != "lease_refused" or env.killed():
                break
            time.sleep(jittered_backoff(attempt, backoff_s, 30.0, "equal"))
        if on_result is not None:
            on_result(result)
        return result

    with ThreadPoolExecutor(max_workers=max(parallel, 1), thread_name_prefix="unit") as pool:
        futures = [pool.submit(one, i, u) for i, u in enumerate(units)]
        return [f.result() for f in futures]


def repo_untouched(repo: Path) -> bool:
    """True when the user's checkout has no uncommitted changes (what a failed agent leaves)."""
    return git(repo, "status", "--porcelain").strip() == ""
