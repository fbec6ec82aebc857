"""Git commands that list the worktrees, run while other processes add and remove unit
workspaces: git 2.39 dies when an admin dir it listed is gone before it reads it (``fatal: failed
to read .git/worktrees/tree/commondir``, ``bad object worktrees/tree/HEAD``), so fleet runs
them under the worktree lock (:mod:`fleet.forge.worktree`). Measured before the lock: 3-8% of
``fetch``, ``checkout <branch>`` and ``branch -f`` calls failed against two churning processes;
here 40 rounds of each must all succeed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

from fleet.forge.remote import fetch
from fleet.forge.worktree import checked_out_at, checked_out_branches, workspaces_root

ROUNDS = 40

CHURN = textwrap.dedent("""
    import sys
    from pathlib import Path
    from fleet.forge.worktree import create_workspace, remove_workspace
    repo, who, stop = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    n = 0
    while not stop.exists():
        ws = create_workspace(repo, "churn", f"{who}-{n}", "main")
        remove_workspace(ws)
        n += 1
    print(n)
""")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_listing_commands_while_other_processes_add_and_remove_worktrees(
    git_repo: Path, tmp_path: Path
) -> None:
    origin = tmp_path / "origin.git"
    _git(tmp_path, "clone", "-q", "--bare", str(git_repo), str(origin))
    _git(git_repo, "remote", "add", "origin", str(origin))
    _git(git_repo, "branch", "side")
    stop = tmp_path / "stop"
    churners = [subprocess.Popen([sys.executable, "-c", CHURN, str(git_repo), f"p{i}", str(stop)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for i in range(2)]
    try:
        deadline = time.monotonic() + 30
        while not workspaces_root(git_repo).is_dir() and time.monotonic() < deadline:
            time.sleep(0.01)  # both churners at work before the first round
        for _ in range(ROUNDS):
            _git(origin, "branch", "-f", "side", "main")
            head = _git(git_repo, "rev-parse", "main").strip()
            assert fetch(git_repo, ["side"]) == {"side": head}
            assert checked_out_at(git_repo, "main") == git_repo.resolve()
            assert checked_out_at(git_repo, "side") is None
            assert "main" in checked_out_branches(git_repo)
    finally:
        stop.touch()
        outs = [c.communicate(timeout=60) for c in churners]
    assert [c.returncode for c in churners] == [0, 0], [err for _, err in outs]
    made = [int(out.strip() or 0) for out, _ in outs]
    assert min(made) > 0  # each churner added and removed worktrees during the rounds
    assert _git(git_repo, "worktree", "list", "--porcelain").count("worktree ") == 1
