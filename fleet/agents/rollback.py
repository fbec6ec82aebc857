"""Rollback as new ledger events: restore a unit's worktree to an agent step (in a given
worktree, or in the unit's recreated workspace: :func:`restore_unit`), or revert an integrated
patch on the integration branch. Nothing in the ledger is deleted or rewritten.

Steps are recorded by :func:`step_recorder` (``fleet.unit`` passes it as ``on_step`` to every
agent that takes one, and records the other agents' steps after the run): each
``agent.step`` event carries the step and the worktree's whole diff against the unit's base
commit after it, so any step can be restored on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet.errors import FleetError
from fleet.forge._git import git
from fleet.forge._git import run as run_git
from fleet.protocols import Ledger
from fleet.types import AgentStep

STEP = "agent.step"
ROLLBACK_UNIT = "rollback.unit"
ROLLBACK_PATCH = "rollback.patch"

__all__ = ["ROLLBACK_PATCH", "ROLLBACK_UNIT", "STEP", "RollbackError", "RolledBack", "restore_unit",
           "rollback_patch",
           "rollback_unit", "step_recorder"]


class RollbackError(FleetError):
    """The ledger does not hold what the rollback needs (no such unit, step or patch)."""


@dataclass(frozen=True)
class RolledBack:
    """What a rollback did; ``event_seq`` is the ledger event that records it."""

    kind: str
    target: str
    detail: str
    event_seq: int
    worktree: Path | None = None


def step_recorder(
    ledger: Ledger, unit: str, campaign: str, base_commit: str, actor: str = "agent"
) -> Callable[[AgentStep, str], None]:
    """An ``on_step`` callback that appends one ``agent.step`` event per tool call."""

    def record(step: AgentStep, diff: str) -> None:
        ledger.append(
            STEP,
            {
                "index": step.index,
                "action": step.action,
                "arguments": step.arguments,
                "ok": step.ok,
                "result": step.result[:2000],
                "base": base_commit,
                "diff": diff,
            },
            unit=unit,
            campaign=campaign,
            actor=actor,
        )

    return record


def _git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    # a diff of a file in a legacy encoding carries its bytes as surrogate escapes
    data = None if stdin is None else stdin.encode("utf-8", "surrogateescape")
    return git(cwd, *args, input=data)


def _last_run(ledger: Ledger, unit: str) -> list[Any]:
    """The ``agent.step`` events of the unit's last run that carry a replayable diff (an agent
    may also log steps of its own without one; those are not restorable and are skipped)."""
    steps = [e for e in ledger.events(unit=unit, kind=STEP) if "diff" in e.payload]
    if not steps:
        raise RollbackError(f"the ledger holds no restorable agent steps of unit {unit}")
    # the last run of the unit: its steps restart at index 0
    starts = [i for i, e in enumerate(steps) if e.payload["index"] == 0] or [0]
    return steps[starts[-1]:]


def _step_diff(run: list[Any], unit: str, to_step: int) -> str:
    if to_step == -1:
        return ""
    chosen = [e for e in run if e.payload["index"] == to_step]
    if not chosen:
        last = run[-1].payload["index"]
        raise RollbackError(f"unit {unit} has no step {to_step} (steps 0..{last})")
    return str(chosen[0].payload["diff"])


def rollback_unit(
    ledger: Ledger, worktree: Path, unit: str, to_step: int, actor: str = "fleet",
    extra: dict[str, Any] | None = None,
) -> RolledBack:
    """Restore ``worktree`` to the state right after step ``to_step`` of ``unit`` (``-1`` = the
    base commit, before any step), from the last recorded run of that unit."""
    run = _last_run(ledger, unit)
    base = str(run[0].payload["base"])
    diff = _step_diff(run, unit, to_step)
    _git(worktree, "reset", "-q", "--hard", base)
    _git(worktree, "clean", "-qfd")
    if diff:
        _git(worktree, "apply", "--index", "--whitespace=nowarn", "-", stdin=diff)
    event = ledger.append(
        ROLLBACK_UNIT,
        {"to_step": to_step, "base": base, "worktree": str(worktree), "diff": diff,
         **(extra or {})},
        unit=unit, campaign=run[0].campaign, actor=actor,
    )
    return RolledBack(ROLLBACK_UNIT, unit, f"restored to step {to_step} on {base[:12]}",
                      event.seq, worktree)


def restore_unit(
    ledger: Ledger, repo: Path, unit: str, to_step: int, actor: str = "fleet"
) -> RolledBack:
    """Recreate the unit's workspace in ``repo`` (:mod:`fleet.forge.worktree`, branch
    ``fleet/<campaign>/<unit>`` reset to the base commit of the unit's last recorded run), replay
    the recorded diff of step ``to_step`` into it and leave it in place; ``RolledBack.worktree``
    is its path. The branch's previous head, if it had one, is kept in the event
    (``previous_head``) and under ``refs/fleet/rollback/<campaign>/<unit>/<sha>`` (``kept_as``)
    so nothing is lost, not even to ``git gc``. The worktree is left unlocked (it has no live
    owner): it stays until ``fleet gc``, the next restore of the unit or its next run takes it
    back; a workspace a live unit run holds is refused (``GitError``)."""
    from fleet.forge.worktree import (
        branch_name,
        create_workspace,
        remove_workspace,
        worktree_lock,
    )

    run = _last_run(ledger, unit)
    campaign = run[0].campaign
    if campaign is None:
        raise RollbackError(f"the steps of unit {unit} name no campaign")
    _step_diff(run, unit, to_step)  # refuse an unknown step before touching the repository
    branch = branch_name(campaign, unit)
    head = run_git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}")
    previous = head.stdout.decode().strip() if head.returncode == 0 else None
    kept_as = None
    if previous is not None:  # the branch is about to move: keep its head reachable for good
        kept_as = f"refs/fleet/rollback/{campaign}/{unit}/{previous}"
        _git(repo, "update-ref", kept_as, previous)
    ws = create_workspace(repo, campaign, unit, str(run[0].payload["base"]))
    try:
        # no live owner once we return: unlocked, so the next restore or ``fleet gc`` takes it
        with worktree_lock(repo):  # `worktree unlock` lists the worktrees
            _git(repo, "worktree", "unlock", str(ws.path))
        return rollback_unit(ledger, ws.path, unit, to_step, actor,
                             extra={"branch": ws.branch, "previous_head": previous,
                                    "kept_as": kept_as})
    except BaseException:
        remove_workspace(ws, delete_branch=True)
        if previous is not None:  # put the branch back where it was
            with worktree_lock(repo):
                run_git(repo, "branch", "-f", branch, previous)
        raise


def rollback_patch(
    ledger: Ledger, repo: Path, branch: str, patch: str, actor: str = "fleet"
) -> RolledBack:
    """Revert the commit of an integrated patch on ``branch`` (``patch`` = a commit id, or a
    unit key found in the commit messages ``fleet(<campaign>): unit <key>``) with a new revert
    commit made in a temporary worktree; the user's checkout is not touched. That worktree is
    a registered scratch tree (:func:`fleet.forge.worktree.scratch_tree`): added and removed
    under the repository's worktree lock like a unit's, so a rollback never races a unit or an
    integration adding or pruning worktrees, and ``fleet gc`` removes it after a crash."""
    from fleet.forge.worktree import scratch_tree, worktree_lock

    commit = _find_commit(repo, branch, patch)
    with scratch_tree(repo, "rollback", branch) as tree:
        with worktree_lock(repo):  # `checkout <branch>` lists the worktrees (forge.worktree)
            _git(tree, "checkout", "-q", branch)  # refused while another worktree has it out
        _git(tree, "revert", "--no-edit", commit)
        head = _git(tree, "rev-parse", "HEAD").strip()
    event = ledger.append(
        ROLLBACK_PATCH,
        {"branch": branch, "reverted": commit, "head": head, "patch": patch},
        unit=None if patch == commit else patch, actor=actor,
    )
    return RolledBack(ROLLBACK_PATCH, patch, f"reverted {commit[:12]} on {branch}: "
                      f"new head {head[:12]}", event.seq)


def _find_commit(repo: Path, branch: str, patch: str) -> str:
    found = _git(repo, "log", "--format=%H", "--fixed-strings", f"--grep=unit {patch}", branch)
    commits = found.split()
    if commits:
        return commits[0]
    done = run_git(repo, "rev-parse", "--verify", f"{patch}^{{commit}}")
    if done.returncode == 0:
        sha = done.stdout.decode().strip()
        on_branch = run_git(repo, "merge-base", "--is-ancestor", sha, branch)
        if on_branch.returncode == 0:
            return sha
        raise RollbackError(f"commit {patch} is not on {branch}")
    raise RollbackError(f"no integrated patch {patch!r} on {branch}")
