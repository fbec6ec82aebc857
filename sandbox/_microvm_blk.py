"""One command in a microVM over the block transport (Firecracker, or QEMU ``transport="blk"``).

Disks in guest order: ``vda`` the control tar (setup.sh, limits.sh, run.sh, finish.sh), ``vdb``
the worktree tar, ``vdc`` the (sparse) output disk, ``vdd``... one read-only ext4 image per
toolchain directory. The guest unpacks the worktree at its host path, runs the command there
under the guest's own timeout and cgroup limits, and tars ``.ctl/`` results plus the worktree onto
``vdc``; the host then applies the worktree part inside the worktree only (``_disks``). If the VM
has to be killed (the guest stopped answering), nothing comes back: the run is a timeout.
"""

from __future__ import annotations

import shlex
import sysconfig
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox._common import sandbox_env, toolchain_dirs
from sandbox._disks import (
    Snapshot,
    apply_output,
    make_output_disk,
    read_ctl,
    toolchain_image,
    write_ctl_disk,
    write_work_disk,
)
from sandbox._guest_image import GuestImageError
from sandbox._process import decode
from sandbox._protocol import EndReason, ExecResult, Limits

if TYPE_CHECKING:
    from sandbox.microvm import MicroVMSandbox

__all__ = [
    "CTL_FILES",
    "OUTPUT_DISK_MIN",
    "block_readonly_paths",
    "finish_script",
    "output_disk_size",
    "quota_size",
    "run_block",
    "setup_script",
]

OUTPUT_DISK_MIN = 4 * 1024**3  # sparse: costs the host only what the guest writes
_BLOCK = 4096
_FULL_KB = 64  # less than this left on the worktree's tmpfs: the command hit the quota
_MEMBER_BYTES = 2048  # a tar member's header(s) and padding, at most (GNU long names included)
CTL_FILES = ("exit", "stdout", "stderr", "limit", "peak", "elapsed")


def block_readonly_paths() -> list[Path]:
    """The default toolchain for disks: system binaries and libraries plus the interpreter's dirs.

    All of ``/usr`` (gigabytes) would be one huge image; these are what a command and Python
    need. Pass ``MicroVMConfig(readonly_paths=...)`` for more (each becomes one cached image).
    """
    arch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    system = [Path("/usr/bin"), Path("/usr/sbin"), Path("/usr/lib", arch), Path("/usr/lib64")]
    return [p for p in system if p.is_dir() and not p.is_symlink()] + toolchain_dirs()


def _dev(index: int) -> str:
    return "/dev/vd" + "abcdefghijklmnopqrstuvwxyz"[index]


def quota_size(snapshot: Snapshot, disk_bytes: int) -> tuple[int, int]:
    """(bytes, inodes) of the guest's worktree tmpfs: the files that went in, block-rounded
    (directories cost a tmpfs no blocks), plus the quota; inodes one per 4 KiB of quota (as
    ``_quota``) plus one per entry that went in."""
    blocks = sum(-(-size // _BLOCK) * _BLOCK for size, _ in snapshot.files.values())
    entries = len(snapshot.files) + len(snapshot.other)
    return blocks + disk_bytes, entries + disk_bytes // _BLOCK + 64


def setup_script(work: Path, readonly: Sequence[Path], quota: tuple[int, int] | None = None) -> str:
    q = shlex.quote(str(work))
    lines = [f"mkdir -p {q}"]
    if quota is not None:
        # the disk quota: the worktree is a tmpfs of what went in plus the quota, so a write
        # past it fails with ENOSPC in the guest, and the result tar cannot outgrow it
        size, inodes = quota
        lines.append(f"mount -t tmpfs -o size={size},nr_inodes={inodes},mode=0755 tmpfs {q}")
    lines += [f"tar -xf /dev/vdb -C {q} || echo 'fleet-guest: worktree unpack failed'"]
    for i, path in enumerate(readonly):
        p = shlex.quote(str(path))
        lines.append(f"mkdir -p {p} && mount -t ext4 -o ro {_dev(3 + i)} {p}")
    return "\n".join(lines) + "\n"


def finish_script(work: Path, output_cap: int | None, quota: bool = False) -> str:
    """Guest shell that caps the streams and writes the result tar onto ``/dev/vdc``; with a
    quota it records ``disk`` as the limit when the worktree's tmpfs is (nearly) full."""
    lines = ["cd /", "for f in stdout stderr limit peak elapsed; do : >> .ctl/$f; done"]
    if quota:
        q = shlex.quote(str(work))
        lines.append(
            f"set -- $(df -k {q} | tail -n 1); full=$(( ${{4:-0}} < {_FULL_KB} )); "
            f'set -- $(df -i {q} 2>/dev/null | tail -n 1); [ "${{4:-1}}" = 0 ] && full=1; '
            '[ "$full" = 1 ] && ! grep -q . .ctl/limit && echo disk > .ctl/limit'
        )
    if output_cap is not None:
        for stream in ("stdout", "stderr"):
            lines.append(
                f"head -c {output_cap + 1} .ctl/{stream} > .ctl/{stream}.cap && "
                f"mv .ctl/{stream}.cap .ctl/{stream}"
            )
    rel = shlex.quote(str(work).lstrip("/"))
    lines.append("[ -f .ctl/exit ] && set -- .ctl/exit || set --")
    lines.append(
        f'tar -cf /dev/vdc "$@" .ctl/stdout .ctl/stderr .ctl/limit .ctl/peak .ctl/elapsed {rel} '
        "|| echo 'fleet-guest: writing the result tar failed'"
    )
    return "\n".join(lines) + "\n"


def output_disk_size(work_tar: int, quota: tuple[int, int] | None, cap: int | None) -> int:
    """The output disk: without a quota large and sparse; with one, no more than the result
    tar can be (the worktree tmpfs's bytes and members, the capped streams), so the host's
    disk never holds more than the worktree plus the quota, whatever the guest writes there."""
    if quota is None:
        return max(OUTPUT_DISK_MIN, 3 * work_tar)
    size, inodes = quota
    streams = 2 * (cap if cap is not None else OUTPUT_DISK_MIN // 2)
    return size + inodes * _MEMBER_BYTES + streams + 16 * 1024**2


def run_block(
    box: MicroVMSandbox,
    argv: Sequence[str],
    work: Path,
    env: Mapping[str, str] | None,
    lim: Limits,
    deadline: float | None,
    mem_mb: int,
) -> ExecResult:
    """Boot, run ``argv`` in the guest's copy of ``work``, apply its changes back, report."""
    readonly = [p.resolve() for p in box.block_readonly()]
    images = [toolchain_image(p) for p in readonly]
    with tempfile.TemporaryDirectory(prefix="fleet-microvm-blk-") as tmp:
        d = Path(tmp)
        limits_sh, run_sh = box.command_scripts(
            argv, work, sandbox_env(env), lim, "/sys/fs/cgroup/cmd", timeout=deadline
        )
        snapshot = write_work_disk(d / "work.tar", work)
        size = (d / "work.tar").stat().st_size
        quota = None if lim.disk_bytes is None else quota_size(snapshot, lim.disk_bytes)
        ctl_files = {
            "setup.sh": setup_script(work, readonly, quota),
            "limits.sh": limits_sh,
            "run.sh": run_sh,
            "finish.sh": finish_script(work, lim.output_bytes, quota is not None),
        }
        write_ctl_disk(d / "ctl.tar", ctl_files)
        make_output_disk(d / "out.img", output_disk_size(size, quota, lim.output_bytes))
        disks = [(d / "ctl.tar", True), (d / "work.tar", True), (d / "out.img", False)]
        disks += [(img, True) for img in images]
        host_timeout = None if deadline is None else deadline + box.boot_grace_s()
        raw = box.launch_block(disks, d, mem_mb, host_timeout)
        if raw.timed_out:
            return ExecResult(137, "", "", raw.wall_s, None, EndReason.TIMEOUT, box.name)
        ctl = d / "results"
        ctl.mkdir()
        caps = {} if lim.output_bytes is None else {
            "stdout": lim.output_bytes, "stderr": lim.output_bytes
        }  # fmt: skip
        try:
            read_ctl(d / "out.img", ctl, caps)
            applied = apply_output(d / "out.img", work, snapshot)
        except tarfile.TarError as exc:
            console = decode(raw.stdout + raw.stderr)[-1500:]
            raise GuestImageError(f"unreadable result disk ({exc}); console: {console}") from exc
        result = box._result(False, raw.wall_s, raw.stdout + raw.stderr, ctl, lim)
        elapsed = (ctl / "elapsed").read_text().strip() if (ctl / "elapsed").exists() else ""
    # SIGKILL with no limit recorded: the guest's timeout(1) fired if its clock says so
    killed = result.exit_code == 137 and result.reason is EndReason.EXITED
    ran_out = deadline is not None and elapsed.isdigit() and int(elapsed) >= round(deadline) - 1
    if killed and ran_out:
        result = replace(result, reason=EndReason.TIMEOUT)
    if applied.refused:
        note = "\n[fleet sandbox: refused guest changes outside the worktree: "
        note += "; ".join(applied.refused[:20]) + "]\n"
        result = replace(result, stderr=result.stderr + note)
    return result
