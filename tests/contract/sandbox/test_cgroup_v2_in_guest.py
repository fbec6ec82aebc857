"""The cgroup v2 limits path of ``sandbox._limits``, exercised for real.

This host binds every controller to cgroup v1, so the v2 code (memory.max, pids.max,
memory.events/pids.events for the reason, memory.peak, cgroup.kill) cannot run here. The microVM
guest, however, is a real Linux with a cgroup v2 hierarchy whose memory and pids controllers are
enabled: the test ships this checkout's ``sandbox`` package into a worktree and runs
``LocalSandbox`` inside the guest, so ``create_cgroups`` takes its v2 branch on a real kernel.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import sandbox
from sandbox import Limits
from sandbox._guest_image import guest_image
from sandbox.microvm import MicroVMConfig, MicroVMSandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

GUEST_SCRIPT = r"""
import json, sys, time
from pathlib import Path
from sandbox._limits import create_cgroups
from sandbox._protocol import Limits
from sandbox.local import LocalSandbox

out = {}
probe = create_cgroups(Limits(memory_bytes=64 * 1024**2, processes=16))
out["version"] = probe.version if probe else None
out["files"] = sorted(p.name for p in probe.dirs["unified"].iterdir()) if probe else []
if probe:
    d = probe.dirs["unified"]
    out["memory.max"] = (d / "memory.max").read_text().strip()
    out["pids.max"] = (d / "pids.max").read_text().strip()
    probe.remove()
    out["removed"] = not d.exists()
box = LocalSandbox(warn=False)
here = Path(".")
bomb = box.run(["/bin/sh", "-c", "while :; do sleep 60 & done"], here, timeout=60,
               limits=Limits(processes=24))
out["bomb"] = [bomb.reason.value, round(bomb.wall_s, 1)]
hog = "b = bytearray(256 * 1024**2)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('survived')"
mem = box.run([sys.executable, "-c", hog], here, timeout=60,
              limits=Limits(memory_bytes=64 * 1024**2))
out["hog"] = [mem.reason.value, mem.peak_memory_bytes, "survived" in mem.stdout]
left = box.run(["/bin/sh", "-c", "(sleep 3; echo late > late.txt) & echo started"], here,
               timeout=30)
out["left"] = [left.reason.value, left.stdout]
ok = box.run(["/bin/sh", "-c", "echo fine"], here, timeout=30)
out["ok"] = [ok.reason.value, ok.stdout, ok.peak_memory_bytes is not None]
time.sleep(4)
out["late_file"] = Path("late.txt").exists()
out["leftover_groups"] = sorted(p.name for p in Path("/sys/fs/cgroup").glob("fleet-sandbox-*"))
print(json.dumps(out))
"""


def test_cgroup_v2_limits_on_a_real_v2_kernel(worktree: Path) -> None:
    box = MicroVMSandbox(MicroVMConfig(vmm="qemu", transport="9p"))
    try:
        box._binary()
        guest_image()
    except OSError as exc:  # no probe boot: the test's own boot is the check
        pytest.skip(f"microvm does not work here: {exc}")
    pkg = Path(sandbox.__file__).parent
    shutil.copytree(pkg, worktree / "sandbox", ignore=shutil.ignore_patterns("__pycache__"))
    (worktree / "check.py").write_text(GUEST_SCRIPT)
    # Leave the per-command group the guest init made, for the root (whose controllers are
    # enabled for its children), as a process that owns a delegated v2 subtree would be.
    script = f"echo $$ > /sys/fs/cgroup/cgroup.procs && exec {sys.executable} check.py"
    res = box.run(["/bin/sh", "-c", script], worktree, timeout=240,
                  limits=Limits(memory_bytes=None, processes=None))  # fmt: skip
    assert res.ok, (res.stdout[-500:], res.stderr[-2000:])
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["version"] == 2
    assert {"memory.max", "pids.max", "memory.events", "memory.peak", "cgroup.kill"} <= set(
        out["files"]
    )
    assert out["memory.max"] == str(64 * 1024**2) and out["pids.max"] == "16"
    assert out["removed"]
    assert out["bomb"][0] == "killed_by_limit", out  # pids.events "max" > 0
    assert out["bomb"][1] < 30
    reason, peak, survived = out["hog"]
    assert reason == "killed_by_limit" and not survived, out  # memory.events oom_kill
    assert peak is not None and 32 * 1024**2 < peak <= 70 * 1024**2, out  # memory.peak
    assert out["left"] == ["exited", "started\n"]
    assert out["ok"] == ["exited", "fine\n", True]
    assert out["late_file"] is False  # cgroup.kill took the background process
    assert out["leftover_groups"] == []
