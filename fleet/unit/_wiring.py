"""The real parts behind ``Workspaces`` and ``Gates``: per-unit git worktrees
(:mod:`fleet.forge.worktree`) and the verification gates (:func:`fleet.verify.run_gates`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.forge.worktree import create_workspace, remove_workspace
from fleet.types import AgentOutcome, Verdict, Workspace, WorkUnit
from fleet.verify import GateOptions, run_gates

if TYPE_CHECKING:
    from sandbox import Sandbox


class GitWorkspaces:
    """Worktrees of ``repo`` on ``fleet/<campaign>/<unit>``; the user's checkout is never
    touched. Safe from concurrent units: :mod:`fleet.forge.worktree` serializes changes of the
    repository's worktree set itself (across threads and processes)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo

    def create(self, unit: WorkUnit) -> Workspace:
        return create_workspace(self.repo, unit.campaign, unit.key, unit.base_commit)

    def remove(self, workspace: Workspace, keep_branch: bool) -> None:
        remove_workspace(workspace, delete_branch=not keep_branch)


class VerifyGates:
    """Every gate of :mod:`fleet.verify` on the agent's patch against the unit's base commit,
    with the unit's write set as the lease scope and ``graph`` selecting the impacted tests."""

    def __init__(self, repo: Path, graph: Any = None, options: GateOptions | None = None) -> None:
        self.repo = repo
        self.graph = graph
        self.options = options

    def __call__(self, unit: WorkUnit, workspace: Workspace, outcome: AgentOutcome,
                 sandbox: Sandbox) -> list[Verdict]:
        options = self.options or GateOptions(campaign=unit.campaign)
        return run_gates(self.repo, outcome.patch, unit.write_set, base=unit.base_commit,
                         sandbox=sandbox, graph=self.graph, options=options)
