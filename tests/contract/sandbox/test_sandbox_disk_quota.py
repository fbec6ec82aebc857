"""A disk quota for everything a command writes (issue: one command wrote 8 x 255 MB into the
worktree on bwrap and gVisor; only the per-file cap applied): on every backend, a command that
writes past ``Limits.disk_bytes`` fails with ENOSPC and ends as ``killed_by_limit``, the worktree
on the host holds at most the quota, and what the command changed within it -- new, changed and
deleted files, a directory replaced, a symlink -- lands in the worktree as it would without the
quota."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox
from sandbox._quota import supported

MB = 1024**2


def test_the_quota_can_be_mounted_here() -> None:
    # a tmpfs and an overlay per run: root (as CI runs the suite), overlayfs in the kernel
    assert supported(), "the disk quota needs root and overlayfs"


def _size(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.backends("all")
def test_writing_past_the_quota_fails_and_the_host_keeps_at_most_the_quota(
    box: Sandbox, worktree: Path
) -> None:
    before = _size(worktree)
    script = (
        "for i in 1 2 3 4 5 6 7 8; do head -c 40000000 /dev/zero > big$i.bin || echo fail$i; "
        "done; echo end"
    )
    res = box.run(
        ["/bin/sh", "-c", script],
        worktree,
        timeout=300,
        limits=Limits(disk_bytes=100 * MB, file_bytes=64 * MB),
    )
    assert res.reason.value == "killed_by_limit", (res.reason, res.stdout, res.stderr[-300:])
    assert "fail" in res.stdout and "end" in res.stdout  # the writes failed, not the command
    written = _size(worktree) - before
    assert 40_000_000 <= written <= 100 * MB, written  # what fit is kept, nothing past it
    assert (worktree / "big1.bin").stat().st_size == 40_000_000


@pytest.mark.backends("all")
def test_changes_within_the_quota_land_in_the_worktree(box: Sandbox, worktree: Path) -> None:
    (worktree / "keep.txt").write_text("old\n")
    (worktree / "gone.txt").write_text("x\n")
    (worktree / "d").mkdir()
    (worktree / "d" / "old").write_text("old\n")
    os.symlink("keep.txt", worktree / "link-to-keep")
    script = (
        "echo new > new.txt && echo changed > keep.txt && rm gone.txt && rm -r d && mkdir d "
        "&& echo g > d/g && ln -s new.txt newlink && rm link-to-keep && mkdir -p a/b "
        "&& echo deep > a/b/c && chmod 755 new.txt"
    )
    res = box.run(
        ["/bin/sh", "-c", script], worktree, timeout=300, limits=Limits(disk_bytes=50 * MB)
    )
    assert res.ok, (res.reason, res.stderr[-300:])
    assert (worktree / "new.txt").read_text() == "new\n"
    assert (worktree / "new.txt").stat().st_mode & 0o777 == 0o755
    assert (worktree / "keep.txt").read_text() == "changed\n"
    assert not (worktree / "gone.txt").exists()
    assert sorted(p.name for p in (worktree / "d").iterdir()) == ["g"]  # replaced, not merged
    assert os.readlink(worktree / "newlink") == "new.txt"
    assert not (worktree / "link-to-keep").is_symlink()
    assert (worktree / "a" / "b" / "c").read_text() == "deep\n"


@pytest.mark.backends("fast_all")
def test_no_quota_mount_outlives_a_run(box: Sandbox, worktree: Path) -> None:
    res = box.run(["/bin/sh", "-c", "echo x > f"], worktree, timeout=120)
    assert res.ok
    mounts = Path("/proc/self/mounts").read_text()
    assert f"fleet-quota-{os.getpid()}-" not in mounts


# Run as a uid that is not root, with the system interpreter (the venv's lives under /root):
# the sandbox package imports nothing but the standard library.
_AS_USER = """
import os, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from sandbox import BwrapSandbox, Limits, LocalSandbox
from sandbox._quota import doctor_note, supported
box = {"local": LocalSandbox(), "bwrap": BwrapSandbox()}[sys.argv[2]]
work = Path(sys.argv[3])
(work / "keep.txt").write_text("keep\\n")
(work / "gone.txt").write_text("x\\n")
script = ("rm gone.txt; for i in 1 2 3 4 5 6 7 8; do head -c 40000000 /dev/zero > big$i.bin "
          "|| echo fail$i; done; echo end")
res = box.run(["/bin/sh", "-c", script], work, timeout=120,
              limits=Limits(disk_bytes=100 * 1024**2, file_bytes=64 * 1024**2))
print(supported(), res.reason.value, res.stdout.split(), doctor_note())
"""


@pytest.mark.parametrize("kind", ["local", "bwrap"])
def test_the_quota_holds_for_a_user_that_is_not_root(kind: str) -> None:
    # without root the quota's tmpfs and overlay are mounted in a user namespace of the run's
    # own: the same 8 x 40 MB under 100 MB wrote 2,040 MB (8 x 255 MB: all of it) before
    assert os.geteuid() == 0, "switching to another uid needs root (CI runs the suite as root)"
    import shutil
    import subprocess
    import tempfile

    import sandbox

    uid = 4000 + os.getpid() % 1000
    top = Path(tempfile.mkdtemp(prefix="fleet-quota-user-"))
    try:
        work = top / "wt"
        work.mkdir()
        os.chmod(top, 0o755)
        os.chown(work, uid, uid)
        argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "env",
                f"HOME={top}", "/usr/bin/python3", "-c", _AS_USER,
                str(Path(sandbox.__file__).parents[1]), kind, str(work)]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        line = done.stdout.strip().splitlines()[-1]
        assert line.startswith("True killed_by_limit"), line
        assert "fail8" in line and "end" in line and "user namespace" in line, line
        written = _size(work) - len("keep\n")
        assert 40_000_000 <= written <= 100 * MB, written
        assert (work / "keep.txt").read_text() == "keep\n" and not (work / "gone.txt").exists()
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_bwrap_scratch_is_bounded_by_the_quota_too(worktree: Path) -> None:
    # /tmp and the home are private tmpfs in bwrap: each one is the quota's size, so a
    # command cannot park gigabytes there either (they would sit in the host's memory)
    from sandbox import BwrapSandbox

    script = (
        "head -c 30000000 /dev/zero > /tmp/x || echo tmp-full; "
        'head -c 30000000 /dev/zero > "$HOME/y" || echo home-full; '
        "wc -c < /tmp/x"
    )
    res = BwrapSandbox().run(
        ["/bin/sh", "-c", script], worktree, timeout=60, limits=Limits(disk_bytes=10 * MB)
    )
    assert res.stdout.split() == ["tmp-full", "home-full", str(10 * MB)], (res, res.stderr)
