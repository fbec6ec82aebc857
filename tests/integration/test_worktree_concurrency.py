"""Per-unit workspaces created and removed concurrently in one repository, from threads and from
processes: every one gets its own tree on its own branch at the base, none fails, and all are
gone afterwards (git's ``worktree add`` alone races on ``.git/worktrees/tree<N>``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from fleet.forge.worktree import create_workspace, remove_workspace, workspaces_root
from fleet.types import Workspace

N = 8


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _assert_clean(repo: Path) -> None:
    assert _git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert _git(repo, "branch", "--list", "fleet/*") == ""
    root = workspaces_root(repo)
    assert not root.exists() or list(root.iterdir()) == []


def test_eight_workspaces_from_threads_at_once(git_repo: Path) -> None:
    base = _git(git_repo, "rev-parse", "HEAD").strip()
    barrier = threading.Barrier(N)
    made: dict[int, Workspace] = {}
    errors: list[BaseException] = []

    def unit(i: int) -> None:
        try:
            barrier.wait()
            ws = create_workspace(git_repo, "conc", f"u{i}", base)
            made[i] = ws
            (ws.path / f"unit{i}.txt").write_text(f"{i}\n")
            assert _git(ws.path, "rev-parse", "HEAD").strip() == base
            assert _git(ws.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == f"fleet/conc/u{i}"
            barrier.wait()  # all eight exist together
            remove_workspace(ws)
        except BaseException as exc:  # surfaced below with the thread's own traceback
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=unit, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert sorted(made) == list(range(N))
    assert len({ws.path for ws in made.values()}) == N
    assert all(not ws.path.exists() for ws in made.values())
    _assert_clean(git_repo)


def test_eight_workspaces_from_processes_at_once(git_repo: Path, tmp_path: Path) -> None:
    base = _git(git_repo, "rev-parse", "HEAD").strip()
    go = tmp_path / "go"
    code = textwrap.dedent(
        """
        import os, sys, time
        from pathlib import Path
        from fleet.forge.worktree import create_workspace, remove_workspace
        repo, unit, base, go, done = sys.argv[1:]
        while not Path(go).exists():
            time.sleep(0.001)
        for k in range(3):  # a few rounds of churn: adds racing removes and prunes
            remove_workspace(create_workspace(repo, "conc", f"{unit}-r{k}", base))
        ws = create_workspace(repo, "conc", unit, base)
        (ws.path / "mine.txt").write_text(unit)
        Path(done, unit).write_text(str(ws.path))
        deadline = time.monotonic() + 30
        while len(os.listdir(done)) < 8 and time.monotonic() < deadline:  # all eight at once
            time.sleep(0.01)
        remove_workspace(ws)
        """
    )
    done = tmp_path / "done"
    done.mkdir()
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(git_repo), f"p{i}", base, str(go),
                          str(done)], stderr=subprocess.PIPE, text=True)
        for i in range(N)
    ]
    time.sleep(1.0)  # let every interpreter start and wait on the flag
    go.touch()
    failures = []
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        if proc.returncode != 0:
            failures.append(err)
    assert failures == []
    paths = {(done / f"p{i}").read_text() for i in range(N)}
    assert len(paths) == N and all(not Path(p).exists() for p in paths)
    _assert_clean(git_repo)
