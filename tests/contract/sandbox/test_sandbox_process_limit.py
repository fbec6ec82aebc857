"""The process limit holds inside every isolating backend (issue: under gVisor 1,000 processes
were forked with a limit of 256): a program that forks until it cannot never has more than
``processes`` processes, and reaching the limit ends the run as ``killed_by_limit``, as the pids
cgroup does on bwrap."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox

PY = sys.executable
FORKER = r"""
import os, sys, time
count = open("forked.txt", "w")
for n in range(1, 1001):
    try:
        pid = os.fork()
    except OSError as exc:
        print("refused after", n - 1, exc.errno, flush=True)
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    count.write(f"{n}\n")
    count.flush()
time.sleep(30)
"""


@pytest.mark.backends("fast_isolating")
@pytest.mark.parametrize("limit", [32, 256])
def test_forking_past_the_limit_is_refused_and_ends_the_run(
    box: Sandbox, worktree: Path, limit: int
) -> None:
    res = box.run(
        [PY, "-c", FORKER],
        worktree,
        timeout=90,
        limits=Limits(processes=limit, memory_bytes=1024**3),
    )
    assert res.reason.value == "killed_by_limit", (res.reason, res.stdout, res.stderr[-300:])
    assert res.wall_s < 60
    lines = (worktree / "forked.txt").read_text().split()
    forked = int(lines[-1]) if lines else 0
    # the forker itself is one of the `limit` processes
    assert forked <= limit - 1, forked
