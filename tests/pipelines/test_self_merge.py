"""Self-merge is a fast-forward of the base branch, or a reason why not, on real git."""

from __future__ import annotations

from pathlib import Path

from fleet.integrate import fast_forward
from tests.conftest import git


def _integration_branch(repo: Path) -> str:
    git(repo, "branch", "fleet/c/integration")
    tree = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(tree), "fleet/c/integration")
    (tree / "README.md").write_text("fixed\n")
    git(tree, "commit", "-q", "-am", "integrated")
    git(repo, "worktree", "remove", str(tree))
    return "fleet/c/integration"


def test_fast_forward_moves_the_checked_out_base_and_its_files(git_repo: Path) -> None:
    branch = _integration_branch(git_repo)
    result = fast_forward(git_repo, "main", branch)
    assert result.merged and result.head == git(git_repo, "rev-parse", "main").strip()
    assert (git_repo / "README.md").read_text() == "fixed\n"
    assert git(git_repo, "status", "--porcelain") == ""
    assert fast_forward(git_repo, "main", branch).reason == "already merged"


def test_no_self_merge_over_local_changes_or_a_moved_base(git_repo: Path) -> None:
    branch = _integration_branch(git_repo)
    (git_repo / "README.md").write_text("local edit\n")
    dirty = fast_forward(git_repo, "main", branch)
    assert not dirty.merged and "local changes" in dirty.reason
    assert (git_repo / "README.md").read_text() == "local edit\n"
    git(git_repo, "checkout", "-q", "--", "README.md")
    (git_repo / "other.txt").write_text("x\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "base moved")
    moved = fast_forward(git_repo, "main", branch)
    assert not moved.merged and "not a fast-forward" in moved.reason


def test_a_base_branch_checked_out_nowhere_moves_by_ref(git_repo: Path) -> None:
    git(git_repo, "branch", "release")
    git(git_repo, "checkout", "-q", "-b", "work")
    branch = _integration_branch(git_repo)
    result = fast_forward(git_repo, "release", branch)
    assert result.merged
    assert git(git_repo, "rev-parse", "release") == git(git_repo, "rev-parse", branch)
