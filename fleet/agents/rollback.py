"""Rollback as new ledger events: restore a unit's worktree to an agent step, or revert an
integrated patch on the integration branch. Nothing in the ledger is deleted or rewritten.

Steps are recorded by :func:`step_recorder` (pass it as ``ClaudeAgent(on_step=...)``): each
``agent.step`` event carries the step and the worktree's whole diff against the unit's base
commit after it, so any step can be restored on its own.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fleet.errors import FleetError, GitError
from fleet.protocols import Ledger
from fleet.types import AgentStep

STEP = "agent.step"
ROLLBACK_UNIT = "rollback.unit"
ROLLBACK_PATCH = "rollback.patch"


class RollbackError(FleetError):
    """The ledger does not hold what the rollback needs (no such unit, step or patch)."""


@dataclass(frozen=True)
class RolledBack:
    """What a rollback did; ``event_seq`` is the ledger event that records it."""

    kind: str
    target: str
    detail: str
    event_seq: int


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
    done = subprocess.run(
        ["git", "-c", "user.name=fleet", "-c", "user.email=fleet@fleet.invalid", *args],
        cwd=cwd, input=stdin, capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise GitError(f"git {' '.join(args)} in {cwd}: {done.stderr.strip()}")
    return done.stdout


def rollback_unit(
    ledger: Ledger, worktree: Path, unit: str, to_step: int, actor: str = "fleet"
) -> RolledBack:
    """Restore ``worktree`` to the state right after step ``to_step`` of ``unit`` (``-1`` = the
    base commit, before any step), from the last recorded run of that unit."""
    steps = [e for e in ledger.events(unit=unit, kind=STEP)]
    if not steps:
        raise RollbackError(f"the ledger holds no agent steps of unit {unit}")
    # the last run of the unit: its steps restart at index 0
    starts = [i for i, e in enumerate(steps) if e.payload["index"] == 0] or [0]
    run = steps[starts[-1]:]
    base = run[0].payload["base"]
    if to_step == -1:
        diff = ""
    else:
        chosen = [e for e in run if e.payload["index"] == to_step]
        if not chosen:
            last = run[-1].payload["index"]
            raise RollbackError(f"unit {unit} has no step {to_step} (steps 0..{last})")
        diff = chosen[0].payload["diff"]
    _git(worktree, "reset", "-q", "--hard", base)
    _git(worktree, "clean", "-qfd")
    if diff:
        _git(worktree, "apply", "--index", "--whitespace=nowarn", "-", stdin=diff)
    event = ledger.append(
        ROLLBACK_UNIT,
        {"to_step": to_step, "base": base, "worktree": str(worktree), "diff": diff},
        unit=unit, campaign=run[0].campaign, actor=actor,
    )
    return RolledBack(ROLLBACK_UNIT, unit, f"restored to step {to_step} on {base[:12]}",
                      event.seq)


def rollback_patch(
    ledger: Ledger, repo: Path, branch: str, patch: str, actor: str = "fleet"
) -> RolledBack:
    """Revert the commit of an integrated patch on ``branch`` (``patch`` = a commit id, or a
    unit key found in the commit messages ``fleet(<campaign>): unit <key>``) with a new revert
    commit made in a temporary worktree; the user's checkout is not touched."""
    commit = _find_commit(repo, branch, patch)
    tmp = Path(tempfile.mkdtemp(prefix="fleet-rollback-"))
    tree = tmp / "tree"
    _git(repo, "worktree", "add", "-q", str(tree), branch)
    try:
        _git(tree, "revert", "--no-edit", commit)
        head = _git(tree, "rev-parse", "HEAD").strip()
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=repo,
                       capture_output=True)
        subprocess.run(["git", "worktree", "prune"], cwd=repo, capture_output=True)
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
    done = subprocess.run(["git", "rev-parse", "--verify", f"{patch}^{{commit}}"], cwd=repo,
                          capture_output=True, text=True)
    if done.returncode == 0:
        sha = done.stdout.strip()
        on_branch = subprocess.run(["git", "merge-base", "--is-ancestor", sha, branch],
                                   cwd=repo, capture_output=True)
        if on_branch.returncode == 0:
            return sha
        raise RollbackError(f"commit {patch} is not on {branch}")
    raise RollbackError(f"no integrated patch {patch!r} on {branch}")
