"""Free-form tasks: a free-text ``task`` over ``target_files`` becomes an ad-hoc campaign with one
unit, run by the LLM agent with the task as its brief, judged by the same gates, handed over as
the unit's branch ``fleet/task-<id>/<unit>`` (and a change through a forge when one is given).

The unit's write set is the symbols of the target files (their module code and top-level
definitions; a lease on a class covers its members); its read set is what those symbols use.
Used by ``fleet task`` and by ``POST /v1/jobs/dispatch`` (:class:`TaskLauncher`). With no API key
configured the task fails at once, saying so.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.campaigns.spec import Campaign, Fix
from fleet.errors import ConfigError, FleetError
from fleet.types import JOB_FINISHED, JOB_STARTED, WorkUnit
from fleet.unit._records import UnitResult, ledger_repository
from fleet.unit._run import UnitEnv, run_unit
from fleet.unit._wiring import GitWorkspaces, VerifyGates

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph
    from fleet.protocols import Forge, Model
    from fleet.store import Store
    from sandbox import Sandbox

__all__ = ["TaskLauncher", "TaskRequest", "run_task", "task_campaign", "task_unit"]

TASK_GATES = ("applies", "parses", "lease_scope", "security", "impacted_tests", "review")
KEY_ENV = "ANTHROPIC_API_KEY"


@dataclass(frozen=True)
class TaskRequest:
    task: str
    target_files: tuple[str, ...]
    model: str | None = None
    requested_by: str = ""
    job_id: str = ""


def task_campaign(request: TaskRequest) -> Campaign:
    """The ad-hoc campaign of one task: the task is the brief, the agent gets every tool."""
    digest = hashlib.sha256(f"{request.task}\n{request.target_files}".encode()).hexdigest()
    name = f"task-{(request.job_id or digest)[:12].lower()}"
    name = re.sub(r"[^a-z0-9-]", "-", name)
    return Campaign(name=name, description=request.task, matchers=(),
                    fix=Fix(prompt=request.task), gates=TASK_GATES, model=request.model,
                    source=f"<task {request.job_id or digest[:12]}>")


def task_unit(graph: SymbolGraph, campaign: Campaign, files: Sequence[str], base_commit: str,
              repository: str = "") -> WorkUnit:
    """One unit over ``files``, of the repository whose store key is ``repository``."""
    missing = [f for f in files if not graph.symbols_in(f)]
    if missing:
        raise ConfigError(f"target_files: not an indexed source file of the repository: "
                          f"{', '.join(missing)}")
    symbols = [s for f in files for s in graph.symbols_in(f)
               if s.parent is None or s.parent.endswith("::<module>")]
    write = tuple(sorted(s.id for s in symbols))
    reads: set[str] = set()
    for sid in write:
        try:
            reads |= set(graph.dependencies(sid))
        except KeyError:
            continue
    read = tuple(sorted(reads - set(write)))[:200]
    key = hashlib.sha256(f"{campaign.name}\n{write}\n{base_commit}".encode()).hexdigest()[:16]
    return WorkUnit(key, campaign.name, base_commit, write, read, (), repository=repository)


def _require_key(environ: dict[str, str] | None = None) -> None:
    env = os.environ if environ is None else environ
    if not env.get(KEY_ENV):
        raise ConfigError(f"no API key configured: a free-form task needs the LLM agent and "
                          f"{KEY_ENV} is not set in the orchestrator's environment")


def run_task(request: TaskRequest, repo: Path, store: Store, sandbox: Sandbox, *,
             model: Model | None = None, forge: Forge | None = None) -> UnitResult:
    """Run one free-form task end to end; ``ConfigError`` without an API key (unless given a
    ready ``model``) or for a target file that is not in the repository."""
    from fleet.agents.select import agent_for
    from fleet.graph import index
    from fleet.plan import base_tree, head_commit, lease_requests

    if model is None:
        _require_key()
    campaign = task_campaign(request)
    repo = Path(repo).resolve()
    base = head_commit(repo)
    with base_tree(repo, base) as tree:
        graph = index(tree)
    graph.root = repo
    unit = task_unit(graph, campaign, request.target_files, base, ledger_repository(store.ledger))
    agent = agent_for("claude", campaign, graph=graph, ledger=store.ledger,
                      controls=store.controls, model=model or request.model,
                      notes=tuple(n.text for n in store.memory.list()))
    env = UnitEnv(leases=store.leases, ledger=store.ledger, agent=agent, sandbox=sandbox,
                  workspaces=GitWorkspaces(repo), gates=VerifyGates(repo, graph, campaign=campaign),
                  killed=store.controls.engaged, requests=lambda u: lease_requests(graph, u),
                  campaign=campaign)  # its verdict is keyed with the ad-hoc campaign as built
    try:
        result = run_unit(unit, env, worker="task")
    finally:
        close_clients(agent, env.gates)
    if result.status == "verified" and forge is not None and result.branch:
        change = forge.publish(str(repo), result.branch, f"fleet task: {request.task[:60]}",
                               f"{request.task}\n\n{result.detail}")
        result = replace(result, detail=f"{result.detail} ({change.url})".strip())
    return result


@dataclass
class TaskLauncher:
    """The coordinator API's launcher for free-form tasks (``launcher(job_id, body)``): runs the
    task in a background thread and records ``job.started`` / ``job.finished`` (status, error,
    the unit's result) in the ledger, which ``GET /v1/jobs/{id}`` reads. Without an API key the
    job is ``failed`` at once with that reason."""

    repo: Path
    store: Store
    sandbox: Callable[[str], Sandbox]
    model: Callable[[], Model] | None = None
    forge: Forge | None = None
    environ: dict[str, str] | None = None
    threads: list[threading.Thread] = field(default_factory=list)

    def __call__(self, job_id: str, body: Any) -> str | None:
        model = None if body.model in ("", "codemod") else str(body.model)
        request = TaskRequest(str(body.task), tuple(body.target_files), model,
                              job_id=job_id)
        if self.model is None:
            try:
                _require_key(self.environ)
            except ConfigError as exc:
                self._finished(job_id, "failed", str(exc), None)
                return None
        thread = threading.Thread(target=self._run, args=(request, str(body.sandbox)),
                                  name=f"task-{job_id}", daemon=True)
        self.store.ledger.append(JOB_STARTED, {"job_id": job_id}, unit=job_id, actor="task")
        thread.start()
        self.threads.append(thread)
        return None

    def _run(self, request: TaskRequest, sandbox: str) -> None:
        try:
            result = run_task(request, self.repo, self.store, self.sandbox(sandbox),
                              model=self.model() if self.model else None, forge=self.forge)
        except (FleetError, OSError) as exc:
            return self._finished(request.job_id, "failed", str(exc), None)
        status = "succeeded" if result.status == "verified" else "failed"
        error = None if status == "succeeded" else f"{result.status}: {result.detail}"
        summary = {"unit": result.unit, "status": result.status, "branch": result.branch,
                   "commit": result.commit, "detail": result.detail[:2000],
                   "verdicts": [{"gate": v.gate, "status": v.status} for v in result.verdicts]}
        return self._finished(request.job_id, status, error, summary)

    def _finished(self, job_id: str, status: str, error: str | None,
                  result: dict[str, Any] | None) -> None:
        self.store.ledger.append(JOB_FINISHED, {"job_id": job_id, "run_id": None,
                                 "status": status, "error": error, "result": result},
                                 unit=job_id, actor="task")

    def join(self, timeout: float | None = None) -> None:
        for thread in self.threads:
            thread.join(timeout)


def close_clients(*owners: object) -> None:
    """Close the SDK clients (HTTP connections) of an agent's model and of a Claude reviewer
    among ``owners`` (an agent, the gates), once their unit has run."""
    for owner in owners:
        inner = getattr(owner, "model", None) or getattr(getattr(owner, "reviewer", None),
                                                         "model", None)
        close = getattr(inner, "close", None)
        if callable(close):
            close()
