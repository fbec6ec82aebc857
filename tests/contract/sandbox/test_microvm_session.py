"""``MicroVMSession``: one booted microVM answering many commands over one worktree."""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest

from sandbox import EndReason, Limits
from sandbox.microvm import MicroVMSandbox
from sandbox.microvm_session import MicroVMSession

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def test_one_boot_serves_many_commands_in_isolation(worktree: Path) -> None:
    probe = MicroVMSandbox().probe()
    if not probe.available:
        pytest.skip(f"microvm does not work here: {probe.detail}")
    tag = uuid.uuid4().hex[:8]
    with MicroVMSession(worktree) as vm:
        first = vm.run(["/bin/sh", "-c", f"echo one > one-{tag}.txt; cat hello.txt"], worktree)
        assert first.ok and first.stdout == "hello from the worktree\n"
        assert (worktree / f"one-{tag}.txt").read_text() == "one\n"

        left = vm.run(
            ["/bin/sh", "-c", f"(sleep 2; echo late > late-{tag}.txt) & echo started; exit 3"],
            worktree,
            timeout=60,
        )
        assert left.exit_code == 3 and left.stdout == "started\n"

        py = vm.run([sys.executable, "-c", "import json; print(json.dumps([1]))"], worktree)
        assert py.ok and py.stdout == "[1]\n", py.stderr

        hog = "b = bytearray(1024**3)\nfor i in range(0, len(b), 4096): b[i] = 1"
        mem = vm.run([sys.executable, "-c", hog], worktree, timeout=120,
                     limits=Limits(memory_bytes=128 * 1024**2))  # fmt: skip
        assert mem.reason is EndReason.KILLED_BY_LIMIT

        slow = vm.run(["/bin/sleep", "100"], worktree, timeout=3)
        assert slow.reason is EndReason.TIMEOUT

        start = time.perf_counter()
        after = vm.run(["/bin/true"], worktree, timeout=60)
        assert after.ok  # the session survived a limit kill and a timeout
        assert time.perf_counter() - start < 10  # no boot: a command, not a VM
        with pytest.raises(ValueError, match="outside the session's worktree"):
            vm.run(["/bin/true"], worktree.parent)
    time.sleep(2)
    assert not (worktree / f"late-{tag}.txt").exists()  # killed with its command's cgroup
