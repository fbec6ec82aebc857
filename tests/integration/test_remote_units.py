"""A unit's branch through the remote (``GitWorkspaces.publish``): pushed under a lease on what
the remote held when the unit's workspace was made, so a worker that ran the unit from a stale
view (a zombie that lost its leases while another worker finished the unit) is refused and the
remote keeps the other worker's commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fleet.forge.remote import checkout
from fleet.types import Workspace, WorkUnit
from fleet.unit import GitWorkspaces, commit_workspace
from tests.conftest import commit_files, git


def _work(workspaces: GitWorkspaces, unit: WorkUnit, text: str) -> tuple[Workspace, str]:
    ws = workspaces.create(unit)
    (ws.path / "a.py").write_text(text)
    return ws, commit_workspace(ws, text.strip())


def test_a_stale_worker_is_refused_and_the_remote_keeps_the_finished_unit(
        git_repo: Path, tmp_path: Path) -> None:
    commit_files(git_repo, {"a.py": "A = 1\n"}, "a")
    bare = tmp_path / "r.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(git_repo), str(bare)], check=True)
    url = bare.as_uri()
    base = git(git_repo, "rev-parse", "main").strip()
    unit = WorkUnit(key="u1", campaign="c", base_commit=base, write_set=("a.py::A",),
                    read_set=(), findings=())
    zombie = GitWorkspaces(checkout(url, tmp_path / "zombie"))
    worker = GitWorkspaces(checkout(url, tmp_path / "worker"))

    stale_ws, _ = _work(zombie, unit, "A = 2\n")  # started while the branch was absent
    ws, commit = _work(worker, unit, "A = 3\n")  # the lease expired: another worker re-ran it
    assert worker.publish(ws, commit) is None
    worker.remove(ws, keep_branch=True)
    late = git(stale_ws.path, "rev-parse", "HEAD").strip()
    reason = zombie.publish(stale_ws, late)
    zombie.remove(stale_ws, keep_branch=True)
    assert reason == "push of fleet/c/u1 refused: the remote's fleet/c/u1 is no longer absent"
    assert git(bare, "rev-parse", "fleet/c/u1").strip() == commit

    # a new run of the unit on the zombie's worker, from the remote's current view, may move it
    ws2, again = _work(zombie, unit, "A = 4\n")
    assert zombie.publish(ws2, again) is None
    zombie.remove(ws2, keep_branch=False)
    assert git(bare, "rev-parse", "fleet/c/u1").strip() == again
