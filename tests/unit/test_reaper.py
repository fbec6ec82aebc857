"""tests/_reaper.py: what a test process started ends with it when it dies without its
teardown (Ctrl-C in ``make test`` had left the throwaway PostgreSQL servers and the celery
workers running)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OWNER = """
import subprocess, sys, time
from pathlib import Path
from tests._reaper import reap_with_owner
target = subprocess.Popen(["sleep", "300"], start_new_session=True)
reaper = reap_with_owner(target.pid, group=True, remove=Path(sys.argv[1]))
if sys.argv[2] == "cancel":
    reaper.cancel()
print(target.pid, reaper.proc.pid, flush=True)
time.sleep(300)
"""


def _owner(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], int, int, Path]:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "file").write_text("x")
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(scratch), mode], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    with owner.stdout:
        target, watcher = map(int, owner.stdout.readline().split())
    return owner, target, watcher, scratch


def _ends(pid: int, timeout_s: float) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)


def test_the_target_is_killed_and_its_directory_removed_when_the_owner_dies(
        tmp_path: Path) -> None:
    owner, target, watcher, scratch = _owner(tmp_path, "watch")
    assert not _ends(target, 0.5)  # the watcher leaves it alone while the owner lives
    owner.kill()
    owner.wait()
    assert _ends(target, 10), "the target outlived its owner"
    assert _ends(watcher, 10)
    deadline = time.monotonic() + 10
    while scratch.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not scratch.exists()


def test_a_cancelled_reaper_leaves_the_target_alone(tmp_path: Path) -> None:
    owner, target, watcher, scratch = _owner(tmp_path, "cancel")
    try:
        assert _ends(watcher, 10)
        owner.kill()
        owner.wait()
        assert not _ends(target, 1.0)
        assert scratch.exists()
    finally:
        os.killpg(target, signal.SIGKILL)
