"""Root without cgroups: the process limit still holds (a per-run uid under RLIMIT_NPROC).

The kernel exempts uid 0 from RLIMIT_NPROC, so as root the bwrap and local backends run the
command as a fresh unprivileged uid when no cgroup holds the run. The fork bombs here run with
the backends' cgroups switched off, but the whole test process tree sits in a guard pids cgroup
(a hard cap the sandbox code does not know about), so a bug can never exhaust the host's pids;
the test then checks that the guard was never reached: the sandbox's own limit stopped the bomb.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import Limits
from sandbox._limits import CgroupSet, create_cgroups, prelude

pytestmark = pytest.mark.sandbox

GUARD_PIDS = 400
RUNNER = """
import json, os, sys
from pathlib import Path
from sandbox import Limits
from sandbox.bwrap import BwrapConfig, BwrapSandbox
from sandbox.local import LocalSandbox
name, work = sys.argv[1], Path(sys.argv[2])
box = (BwrapSandbox(BwrapConfig(use_cgroups=False)) if name == "bwrap"
       else LocalSandbox(use_cgroups=False, warn=False))
bomb = box.run(["/bin/bash", "-c", ":(){ :|:& };:; sleep 30"], work, timeout=20,
               limits=Limits(processes=32, memory_bytes=None))
edit = box.run(["/bin/sh", "-c", "echo more >> hello.txt; mkdir -p d && echo n > d/new.txt; id -u"],
               work, timeout=20)
print(json.dumps({"bomb": [bomb.reason.value, bomb.wall_s],
                  "edit": [edit.reason.value, edit.stdout.strip(), edit.stderr]}))
"""


@pytest.fixture
def guard() -> Iterator[CgroupSet]:
    if os.getuid() != 0:
        pytest.skip("not root: RLIMIT_NPROC binds this user directly (prelude's ulimit -p)")
    group = create_cgroups(Limits(processes=GUARD_PIDS, memory_bytes=2 * 1024**3))
    if group is None:
        pytest.skip("no pids cgroup to guard a fork bomb with: not running one unguarded")
    yield group
    group.remove()


@pytest.mark.parametrize("kind", ["bwrap", "local"])
def test_fork_bomb_as_root_without_cgroups_ends_by_the_limit(
    kind: str, guard: CgroupSet, worktree: Path
) -> None:
    if kind == "bwrap" and subprocess.run(["which", "bwrap"], capture_output=True).returncode:
        pytest.skip("bubblewrap is not installed")
    root = Path(__file__).resolve().parents[3]
    argv = [*prelude(Limits(), guard, rlimits=False), sys.executable, "-c", RUNNER]
    done = subprocess.run(
        [*argv, kind, str(worktree)], capture_output=True, text=True, timeout=120, cwd=root
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    reason, wall = out["bomb"]
    assert reason == "killed_by_limit", out
    assert wall < 15, out  # ended by the limit, not the 20 s deadline
    assert not guard.pids_limit_hit()  # the guard never had to act
    assert guard.pids() == set()  # nothing of the bomb is left
    edit_reason, uid, stderr = out["edit"]
    assert edit_reason == "exited", stderr
    assert int(uid) >= 2_000_000_000  # the run's own uid, not root
    assert (worktree / "hello.txt").read_text() == "hello from the worktree\nmore\n"
    owners = {p.lstat().st_uid for p in worktree.rglob("*")}
    assert owners == {worktree.stat().st_uid}  # what it created was given back
    subprocess.run(["/bin/true"], check=True, timeout=10)  # the host is fine
