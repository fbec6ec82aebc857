"""Self-merge: fast-forward the base branch to a verified integration branch, when the campaign's
autonomy allows it. Never a merge commit, never over local changes: anything else is a value
saying why not."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fleet.forge._git import git


@dataclass(frozen=True)
class SelfMerge:
    merged: bool
    reason: str
    head: str = ""


def _checked_out_in(repo: Path, branch: str) -> Path | None:
    current: Path | None = None
    for line in git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            current = Path(line.split(" ", 1)[1])
        elif line == f"branch refs/heads/{branch}":
            return current
    return None


def fast_forward(repo: Path, base_branch: str, branch: str) -> SelfMerge:
    """Move ``base_branch`` to ``branch`` if that is a fast-forward. Where the base branch is
    checked out, its worktree must be clean and is updated with it (``git merge --ff-only``)."""
    head = git(repo, "rev-parse", f"refs/heads/{branch}").strip()
    base = git(repo, "rev-parse", f"refs/heads/{base_branch}").strip()
    if base == head:
        return SelfMerge(False, "already merged", head)
    if git(repo, "merge-base", base, head).strip() != base:
        return SelfMerge(False, f"{base_branch} moved since the integration: not a fast-forward")
    tree = _checked_out_in(repo, base_branch)
    if tree is None:
        git(repo, "update-ref", f"refs/heads/{base_branch}", head, base)
        return SelfMerge(True, "fast-forwarded", head)
    if git(tree, "status", "--porcelain", "--untracked-files=no").strip():
        return SelfMerge(False, f"{tree} has local changes on {base_branch}")
    git(tree, "merge", "-q", "--ff-only", head)
    return SelfMerge(True, "fast-forwarded", head)
