"""The real parts behind ``Workspaces`` and ``Gates``: per-unit git worktrees
(:mod:`fleet.forge.worktree`) and the verification gates (:func:`fleet.verify.run_gates`)."""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.forge.worktree import create_workspace, remove_workspace
from fleet.types import AgentOutcome, Verdict, Workspace, WorkUnit
from fleet.verify import GATES, GateOptions, OfflineReviewer, run_gates

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign
    from fleet.graph import SymbolGraph
    from fleet.protocols import Reviewer
    from sandbox import Sandbox

__all__ = ["GitWorkspaces", "VerifyGates", "default_reviewer"]


class GitWorkspaces:
    """Worktrees of ``repo`` on ``fleet/<campaign>/<unit>``; the user's checkout is never
    touched. Safe from concurrent units: :mod:`fleet.forge.worktree` serializes changes of the
    repository's worktree set itself (across threads and processes).

    When ``repo`` is a worker's mirror of a remote (``fleet.forge.remote.checkout``),
    :meth:`publish` pushes a verified unit's commit to the remote's ``fleet/<campaign>/<unit>``
    under a lease on what the remote held when the workspace was made; in an ordinary
    repository (the embedded default) it does nothing."""

    def __init__(self, repo: Path) -> None:
        from fleet.forge.remote import push_remote

        self.repo = repo
        self.remote = push_remote(repo)
        self._seen: dict[str, str | None] = {}  # branch -> the remote's head at create()
        self._lock = threading.Lock()

    def create(self, unit: WorkUnit) -> Workspace:
        if self.remote is not None:
            from fleet.forge.remote import remote_heads
            from fleet.forge.worktree import branch_name

            branch = branch_name(unit.campaign, unit.key)
            head = remote_heads(self.repo, [branch], self.remote).get(branch)
            with self._lock:
                self._seen[branch] = head
        return create_workspace(self.repo, unit.campaign, unit.key, unit.base_commit)

    def remove(self, workspace: Workspace, keep_branch: bool) -> None:
        with self._lock:
            self._seen.pop(workspace.branch, None)  # published or not, the run is over
        remove_workspace(workspace, delete_branch=not keep_branch)

    def publish(self, workspace: Workspace, commit: str) -> str | None:
        """Push ``commit`` as the workspace's branch to the remote: ``None`` once it is there
        (or when there is no remote), else one line saying why not (the remote refused it, or
        another worker moved the branch since this unit started)."""
        if self.remote is None:
            return None
        from fleet.forge.remote import Pushed, RemoteError, push

        with self._lock:
            expect = self._seen.pop(workspace.branch, None)
        try:
            pushed = push(self.repo, workspace.branch, expect, commit=commit, remote=self.remote)
        except RemoteError as exc:
            return str(exc)
        if isinstance(pushed, Pushed):
            return None
        return f"push of {pushed.branch} refused: {pushed.reason}"


def default_reviewer(campaign: Campaign | None = None, environ: dict[str, str] | None = None
                     ) -> Reviewer:
    """The Claude reviewer when an API key is configured (``ANTHROPIC_API_KEY``; the model of
    ``resolve_model``), else the offline reviewer."""
    env = os.environ if environ is None else environ
    if not env.get("ANTHROPIC_API_KEY"):
        return OfflineReviewer()
    from fleet.agents.anthropic_model import AnthropicModel, resolve_model
    from fleet.verify import ClaudeReviewer

    model = resolve_model(None, campaign.model if campaign is not None else None, dict(env))
    return ClaudeReviewer(AnthropicModel(model=model))


class VerifyGates:
    """The gates of :mod:`fleet.verify` on the agent's patch against the unit's base commit,
    with the unit's write set as the lease scope and ``graph`` selecting the impacted tests.

    With the loaded ``campaign``: only the gates it lists run, and the review gate is
    ``reviewer`` (default :func:`default_reviewer`: Claude whenever a key is configured). The
    review verdict's ``details["reviewer"]`` names the reviewer that ran (in the unit's record)."""

    def __init__(self, repo: Path, graph: SymbolGraph | None = None,
                 options: GateOptions | None = None, campaign: Campaign | None = None,
                 reviewer: Reviewer | None = None) -> None:
        self.repo = repo
        self.graph = graph
        self.options = options
        self.campaign = campaign
        self.reviewer = reviewer

    def _options(self, unit: WorkUnit) -> GateOptions:
        options = self.options or GateOptions(campaign=unit.campaign)
        if self.campaign is None:
            return options
        if self.reviewer is None and options.reviewer is None and "review" in self.campaign.gates:
            self.reviewer = default_reviewer(self.campaign)
        skip = frozenset(GATES) - set(self.campaign.gates)
        return replace(options, skip=options.skip | skip,
                       reviewer=options.reviewer or self.reviewer)

    def __call__(self, unit: WorkUnit, workspace: Workspace, outcome: AgentOutcome,
                 sandbox: Sandbox) -> list[Verdict]:
        options = self._options(unit)
        verdicts = run_gates(self.repo, outcome.patch, unit.write_set, base=unit.base_commit,
                             sandbox=sandbox, graph=self.graph, options=options)
        name = (options.reviewer or OfflineReviewer()).name
        return [replace(v, details={**v.details, "reviewer": name}) if v.gate == "review" else v
                for v in verdicts]
