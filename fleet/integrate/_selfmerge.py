"""Self-merge: fast-forward the base branch to a verified integration branch, when the campaign's
autonomy allows it. Never a merge commit, never over local changes: anything else is a value
saying why not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet.forge._git import git
from fleet.forge.remote import Refused, RemoteError, push, push_remote, remote_url
from fleet.forge.worktree import checked_out_at

__all__ = [
    "REMOTE_FAST_FORWARD",
    "SelfMerge",
    "fast_forward",
    "refusal",
    "self_merge_locally",
]

REMOTE_FAST_FORWARD = "fast-forwarded on "  # the reason of a fast-forward pushed to a remote


@dataclass(frozen=True)
class SelfMerge:
    merged: bool
    reason: str
    head: str = ""


def fast_forward(repo: Path, base_branch: str, branch: str) -> SelfMerge:
    """Move ``base_branch`` to ``branch`` if that is a fast-forward. Where the base branch is
    checked out, its worktree must be clean and is updated with it (``git merge --ff-only``)."""
    head = git(repo, "rev-parse", f"refs/heads/{branch}").strip()
    base = git(repo, "rev-parse", f"refs/heads/{base_branch}").strip()
    if base == head:
        return SelfMerge(False, "already merged", head)
    if git(repo, "merge-base", base, head).strip() != base:
        return SelfMerge(False, f"{base_branch} moved since the integration: not a fast-forward")
    tree = checked_out_at(repo, base_branch)
    remote = push_remote(repo)
    if remote is not None:  # a worker's mirror: the base branch moves on the remote, or not
        return _fast_forward_remote(repo, remote, base_branch, base, head)
    if tree is None:
        git(repo, "update-ref", f"refs/heads/{base_branch}", head, base)
        return SelfMerge(True, "fast-forwarded", head)
    if git(tree, "status", "--porcelain", "--untracked-files=no").strip():
        return SelfMerge(False, f"{tree} has local changes on {base_branch}")
    git(tree, "merge", "-q", "--ff-only", head)
    return SelfMerge(True, "fast-forwarded", head)


def _fast_forward_remote(repo: Path, remote: str, base_branch: str, base: str,
                         head: str) -> SelfMerge:
    """Push the fast-forward of ``base_branch`` to the repository's own remote, under a lease
    on ``base``; a fleet-owned remote (``FLEET_REMOTE``) never moves the source's base."""
    if remote != "origin":
        return SelfMerge(False, f"{base_branch} is the source's ({remote_url(repo, 'origin')}); "
                                f"the fleet pushes only to {remote_url(repo, remote)}")
    try:
        pushed = push(repo, base_branch, base, commit=head, remote=remote)
    except RemoteError as exc:
        return SelfMerge(False, str(exc))
    if isinstance(pushed, Refused):
        return SelfMerge(False, f"{base_branch} moved on the remote since the integration: "
                                "not a fast-forward")
    git(repo, "update-ref", f"refs/heads/{base_branch}", head, base)
    return SelfMerge(True, f"{REMOTE_FAST_FORWARD}{remote_url(repo, remote)}", head)


def refusal(last: Mapping[str, Any]) -> SelfMerge | None:
    """Why the integration ``last`` (its ``integration.finished`` payload) must not be merged
    without review, or ``None`` when it may: its tests on the combination must have run,
    collected a test and passed (every merged unit passed every gate to get there)."""
    passed = last.get("tests_passed")
    if not passed:
        why = ("the combination's tests were not run" if passed is None
               else "the combination's tests fail")
        new = last.get("new_failures") or []
        if passed is False and last.get("base_tests_passed") is False:
            why += (f" ({len(new)} new failure(s); the base fails on its own)" if new
                    else " (no new failure: the base fails on its own)")
        return SelfMerge(False, why)
    if last.get("tests_collected") == 0:
        return SelfMerge(False, "the combination's test run collected no test: nothing "
                                "checked it")
    return None


def self_merge_locally(repo: Path, base_branch: str, branch: str, last: Mapping[str, Any]
                       ) -> tuple[SelfMerge, Path | None]:
    """The local forge's self-merge of the integration ``last``: :func:`refusal`, else
    :func:`fast_forward` (a refusal by git is a value too). Returns the outcome and the
    checkout of the base branch (``None`` where it is checked out nowhere)."""
    from fleet.errors import GitError

    checkout = checked_out_at(repo, base_branch)
    refused = refusal(last)
    if refused is not None:
        return refused, checkout
    try:
        return fast_forward(repo, base_branch, branch), checkout
    except GitError as exc:  # e.g. an untracked file in the checkout the merge would overwrite
        return SelfMerge(False, f"git refused the fast-forward: {str(exc).strip()[:300]}"), checkout
