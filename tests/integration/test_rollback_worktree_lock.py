"""``rollback_patch`` makes its revert in a worktree taken under the repository's worktree lock,
like units and integration: it waits while another holder has the lock, and rollbacks running
at the same time as units creating and removing their workspaces all succeed and leave nothing
behind (``git worktree add`` and ``prune`` race on ``.git/worktrees`` without the lock)."""

from __future__ import annotations

import fcntl
import subprocess
import threading
import time
from pathlib import Path

from fleet.agents.rollback import ROLLBACK_PATCH, rollback_patch
from fleet.forge.worktree import create_workspace, gc, remove_workspace, workspaces_root
from fleet.store import Store

N = 6


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout


def _integration_branches(repo: Path, n: int) -> None:
    """``int<i>``: one unit commit ``fleet(camp): unit u<i>`` each, made without a checkout."""
    for i in range(n):
        _git(repo, "checkout", "-qb", f"int{i}", "main")
        (repo / f"u{i}.txt").write_text(f"{i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"fleet(camp): unit u{i}")
    _git(repo, "checkout", "-q", "main")


def _assert_clean(repo: Path) -> None:
    assert _git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    root = workspaces_root(repo)
    assert not root.exists() or list(root.iterdir()) == []
    report = gc(repo)
    assert report.removed_worktrees == [] and report.removed_scratch == []


def test_a_rollback_waits_for_the_worktree_lock(git_repo: Path, store: Store) -> None:
    _integration_branches(git_repo, 1)
    lock = workspaces_root(git_repo).with_name("fleet-worktrees.lock")
    done: list[str] = []
    errors: list[BaseException] = []

    def rollback() -> None:
        try:
            done.append(rollback_patch(store.ledger, git_repo, "int0", "u0").detail)
        except BaseException as exc:
            errors.append(exc)

    with lock.open("a") as held:  # another holder: a unit adding its worktree, say
        fcntl.flock(held, fcntl.LOCK_EX)
        worker = threading.Thread(target=rollback)
        worker.start()
        time.sleep(1.0)
        assert done == [] and errors == []  # waiting, nothing added under the lock's nose
        assert _git(git_repo, "worktree", "list", "--porcelain").count("worktree ") == 1
        fcntl.flock(held, fcntl.LOCK_UN)
    worker.join(60)
    assert errors == [] and len(done) == 1
    assert "u0.txt" not in _git(git_repo, "ls-tree", "--name-only", "int0").split()
    _assert_clean(git_repo)


def test_rollbacks_and_unit_workspaces_at_the_same_time(git_repo: Path, store: Store) -> None:
    _integration_branches(git_repo, N)
    base = _git(git_repo, "rev-parse", "main").strip()
    barrier = threading.Barrier(2 * N)
    errors: list[BaseException] = []

    def rollback(i: int) -> None:
        try:
            barrier.wait()
            rollback_patch(store.ledger, git_repo, f"int{i}", f"u{i}")
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def unit(i: int) -> None:
        try:
            barrier.wait()
            ws = create_workspace(git_repo, "camp", f"w{i}", base)
            (ws.path / "work.txt").write_text(f"{i}\n")
            remove_workspace(ws)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=f, args=(i,)) for i in range(N) for f in (rollback, unit)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    for i in range(N):
        assert f"u{i}.txt" not in _git(git_repo, "ls-tree", "--name-only", f"int{i}").split()
        assert _git(git_repo, "log", "-1", "--format=%s", f"int{i}").startswith("Revert ")
    assert len(store.ledger.events(kind=ROLLBACK_PATCH)) == N
    assert _git(git_repo, "branch", "--list", "fleet/*") == ""
    _assert_clean(git_repo)
