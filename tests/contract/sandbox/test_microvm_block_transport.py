"""The microVM's block transport, for real under QEMU: the exact guest protocol (tar disks in,
ext4 toolchain images, result tar out) that Firecracker runs where KVM is hardware."""

from __future__ import annotations

import functools
import io
import sysconfig
import tarfile
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from sandbox import EndReason, Limits
from sandbox._disks import toolchain_image
from sandbox._guest_image import guest_image
from sandbox.microvm import MicroVMConfig, MicroVMSandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

ARCH = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
# /bin/sh and coreutils need no more than these: small images, built once and cached
MB = 1024**2
SYSTEM = [p for p in (Path("/usr/bin"), Path("/usr/lib", ARCH), Path("/usr/lib64")) if p.is_dir()]


@functools.cache
def _blk_box() -> tuple[MicroVMSandbox | None, str]:
    """The QEMU block-transport box if its parts are here (no probe boot: the tests boot)."""
    box = MicroVMSandbox(MicroVMConfig(vmm="qemu", transport="blk", readonly_paths=SYSTEM))
    try:
        box._binary()
        guest_image()
        for path in SYSTEM:
            toolchain_image(path)
    except OSError as exc:
        return None, str(exc)
    return box, ""


@pytest.fixture
def blk() -> MicroVMSandbox:
    box, detail = _blk_box()
    if box is None:
        pytest.skip(f"the microVM block transport does not work here: {detail}")
    return box


def test_streams_exit_code_and_worktree_changes_come_back(
    blk: MicroVMSandbox, worktree: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    outside = worktree.parent / "outside"
    (worktree / "escape-link").symlink_to(outside)
    (worktree / "gone.txt").write_text("remove me\n")
    host_tmp = Path(tempfile.gettempdir()) / f"fleet-blk-escape-{tag}"
    script = "; ".join([
        "cat hello.txt", "echo to-stderr >&2", "mkdir -p sub", "echo new > sub/new.txt",
        "rm gone.txt", "echo edited >> hello.txt",
        f"echo x > ../parent-{tag}", f"echo x > escape-link/linked-{tag}",
        f"echo x > {host_tmp}", f"echo x > /usr/bin/fleet-{tag} 2>/dev/null",
        "exit 7",
    ])  # fmt: skip
    res = blk.run(["/bin/sh", "-c", script], worktree, timeout=60)
    assert res.exit_code == 7 and res.reason is EndReason.EXITED, res
    assert res.stdout == "hello from the worktree\n"
    assert res.stderr.startswith("to-stderr\n")
    assert (worktree / "sub" / "new.txt").read_text() == "new\n"
    assert (worktree / "hello.txt").read_text() == "hello from the worktree\nedited\n"
    assert not (worktree / "gone.txt").exists()
    assert (worktree / "escape-link").readlink() == outside
    leaked = [p for p in (worktree.parent / f"parent-{tag}", outside / f"linked-{tag}", host_tmp)
              if p.exists()]  # fmt: skip
    assert leaked == []
    assert not Path(f"/usr/bin/fleet-{tag}").exists()


def _evil_tar(work: Path, outside: Path) -> bytes:
    rel = str(work).lstrip("/")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:

        def add(
            name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = ""
        ) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.size, info.mode = kind, link, len(data), 0o644
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

        add(".ctl/exit", b"0\n")
        add(".ctl/stdout", b"smuggled\n")
        add(str(outside / "absolute.txt"), b"abs")
        add(f"{rel}/../outside/dotdot.txt", b"dotdot")
        add(f"{rel}/link", kind=tarfile.SYMTYPE, link=str(outside))
        add(f"{rel}/link/through.txt", b"through")
        add(f"{rel}/hard", kind=tarfile.LNKTYPE, link="etc/passwd")
        add(f"{rel}/legit.txt", b"legit\n")
    return buf.getvalue()


def test_guest_root_cannot_smuggle_paths_through_the_result_disk(
    blk: MicroVMSandbox, worktree: Path
) -> None:
    """The command is root in the guest: it replaces finish.sh so the result disk holds a tar of
    its choosing. The host must apply only what lands inside the worktree."""
    outside = worktree.parent / "outside"
    (worktree / "evil.tar").write_bytes(_evil_tar(worktree, outside))
    finish = f"cat {worktree}/evil.tar > /dev/vdc\n"
    res = blk.run(["/bin/sh", "-c", f"printf '{finish}' > /.ctl/finish.sh"], worktree, timeout=60)
    assert res.ok and res.stdout == "smuggled\n", res
    assert list(outside.iterdir()) == []
    assert not (worktree.parent / "dotdot.txt").exists()
    assert (worktree / "legit.txt").read_text() == "legit\n"
    assert not (worktree / "link").exists() and not (worktree / "hard").exists()
    assert "refused guest changes outside the worktree" in res.stderr
    assert res.stderr.count("outside the worktree") >= 4


def test_timeout_in_the_guest(blk: MicroVMSandbox, worktree: Path) -> None:
    res = blk.run(["/bin/sh", "-c", "echo started > started.txt; sleep 100"], worktree, timeout=3)
    assert res.reason is EndReason.TIMEOUT, res
    assert (worktree / "started.txt").read_text() == "started\n"  # the guest still reported


def test_the_disk_quota_holds_on_the_block_transport(
    blk: MicroVMSandbox, worktree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 x 40 MB under a 100 MB quota: the guest's worktree is a tmpfs of what went in plus the
    quota, so the writes past it fail there; the run ends as ``killed_by_limit``; the worktree
    gets what fit; and the host's disk (the run's temporary disks, sampled while it runs) never
    holds more than the quota plus the worktree and a few MB of headers."""
    scratch = tmp_path / "host-tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the run's disks land here
    (worktree / "keep.txt").write_text("keep\n")
    peak, stop = [0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            try:
                used = sum(p.lstat().st_blocks * 512 for p in scratch.rglob("*") if p.is_file())
            except FileNotFoundError:  # a run's disk removed between the listing and the stat
                used = 0
            peak[0] = max(peak[0], used)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    script = (
        "for i in 1 2 3 4 5 6 7 8; do head -c 40000000 /dev/zero > big$i.bin || echo fail$i; "
        "done; echo end"
    )
    try:
        res = blk.run(
            ["/bin/sh", "-c", script],
            worktree,
            timeout=300,
            limits=Limits(disk_bytes=100 * MB, file_bytes=64 * MB),
        )
    finally:
        stop.set()
        sampler.join()
    assert res.reason is EndReason.KILLED_BY_LIMIT, (res, res.stderr[-300:])
    assert "fail" in res.stdout and "end" in res.stdout
    written = sum(p.stat().st_size for p in worktree.glob("big*.bin"))
    assert 40_000_000 <= written <= 100 * MB, written
    assert (worktree / "keep.txt").read_text() == "keep\n"
    assert 40_000_000 <= peak[0] <= 100 * MB + 8 * MB, peak[0]
