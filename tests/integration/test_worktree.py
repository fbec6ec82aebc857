"""Per-unit workspaces on real git: created from the planned base, removed on success and on
failure, orphans of a crashed process collected by gc, the user's checkout never touched."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fleet.errors import GitError
from fleet.forge.worktree import branch_name, gc, workspace, workspaces_root


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _snapshot(repo: Path) -> tuple[str, str, str, str]:
    return (
        _git(repo, "rev-parse", "HEAD"),
        _git(repo, "status", "--porcelain", "--untracked-files=all"),
        _git(repo, "diff"),
        (repo / "README.md").read_text(),
    )


@pytest.fixture
def repo(git_repo: Path) -> Path:
    (git_repo / "a.py").write_text("x = 1\n")
    _git(git_repo, "add", "-A")
    _git(git_repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two")
    # the user is in the middle of something: a modified file and an untracked one
    (git_repo / "README.md").write_text("local edit\n")
    (git_repo / "notes.txt").write_text("untracked\n")
    return git_repo


def test_workspace_from_base_and_removed_on_success(repo: Path) -> None:
    before = _snapshot(repo)
    base = _git(repo, "rev-parse", "HEAD~1").strip()
    with workspace(repo, "demo", "k1", base) as ws:
        assert ws.branch == branch_name("demo", "k1") == "fleet/demo/k1"
        assert _git(ws.path, "rev-parse", "HEAD").strip() == ws.base_commit == base
        assert not (ws.path / "a.py").exists()  # the base predates a.py
        assert ws.scratch.is_dir() and ws.repo == repo.resolve()
        assert workspaces_root(repo) in ws.path.parents
        (ws.path / "README.md").write_text("agent edit\n")
        (ws.scratch / "log.txt").write_text("scratch\n")
        assert _snapshot(repo) == before
    assert not ws.path.exists() and not ws.scratch.exists()
    assert _git(repo, "branch", "--list", "fleet/*") == ""
    assert _git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert _snapshot(repo) == before


def test_workspace_removed_on_failure(repo: Path) -> None:
    before = _snapshot(repo)
    with pytest.raises(RuntimeError, match="agent crashed"), \
            workspace(repo, "demo", "k2", "HEAD") as ws:
        (ws.path / "a.py").write_text("x = 2\n")
        raise RuntimeError("agent crashed")
    assert not ws.path.exists()
    assert _git(repo, "branch", "--list", "fleet/*") == ""
    assert _snapshot(repo) == before


def test_keep_branch_and_bad_base(repo: Path) -> None:
    with workspace(repo, "demo", "k3", "HEAD", keep_branch=True) as ws:
        pass
    assert _git(repo, "branch", "--list", ws.branch).strip() == ws.branch
    with pytest.raises(GitError, match="rev-parse"), workspace(repo, "demo", "k4", "nope"):
        pass


def _crash(repo: Path, unit: str) -> None:
    """A separate fleet process that makes a workspace and dies without cleaning up."""
    code = textwrap.dedent(
        f"""
        import os
        from fleet.forge.worktree import create_workspace
        ws = create_workspace({str(repo)!r}, "demo", {unit!r}, "HEAD")
        (ws.path / "a.py").write_text("half-done\\n")
        os._exit(0)
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_gc_removes_orphans_of_a_crash_and_keeps_live_ones(repo: Path) -> None:
    from fleet_pipelines.cli import main

    before = _snapshot(repo)
    _crash(repo, "dead")
    orphan = workspaces_root(repo) / "demo--dead"
    assert (orphan / "tree" / "a.py").read_text() == "half-done\n"
    (workspaces_root(repo) / "stray").mkdir()  # a scratch dir with no worktree at all
    with workspace(repo, "demo", "alive", "HEAD") as live:
        dry = gc(repo, dry_run=True)
        assert dry.removed_worktrees == [str(orphan / "tree")] and orphan.exists()
        report = gc(repo)
        assert report.removed_worktrees == [str(orphan / "tree")]
        assert report.removed_scratch == [str(workspaces_root(repo) / "stray")]
        assert report.removed_branches == ["fleet/demo/dead"]
        assert str(live.path) in report.kept and live.path.is_dir()
        assert not orphan.exists()
    assert _git(repo, "branch", "--list", "fleet/*") == ""
    _crash(repo, "again")
    assert main(["gc", str(repo)]) == 0
    assert not (workspaces_root(repo) / "demo--again").exists()
    assert _snapshot(repo) == before


def test_gc_keeps_branches_with_work_on_them(repo: Path) -> None:
    with workspace(repo, "demo", "done", "HEAD", keep_branch=True) as ws:
        (ws.path / "a.py").write_text("x = 3\n")
        _git(ws.path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "fix")
    report = gc(repo)
    assert "fleet/demo/done" in report.kept and report.removed_branches == []
    assert _git(repo, "branch", "--list", "fleet/*").strip() == "fleet/demo/done"


def test_a_crashed_units_workspace_is_reclaimed_on_retry(repo: Path) -> None:
    _crash(repo, "retry")
    with workspace(repo, "demo", "retry", "HEAD") as ws:
        assert (ws.path / "a.py").read_text() == "x = 1\n"  # fresh from the base
