"""A disk quota for everything a command writes into its worktree.

The per-file cap (``RLIMIT_FSIZE``) does not bound the total: eight 255 MB files are 2 GB on the
host disk. So the command does not write into the worktree itself but into an overlay of it
(``lowerdir`` = the worktree, read only; ``upperdir`` on a tmpfs of ``limits.disk_bytes``, its
inodes bounded too). A write past the quota fails inside with ``ENOSPC`` and the run ends as
``killed_by_limit``; nothing reaches the host disk while the command runs. When it ends, what it
wrote (at most the quota) is applied to the worktree: new and changed files and symlinks, and
the deletions the overlay recorded (whiteouts, opaque directories). Applying never follows a
symlink of the worktree: a path whose parent is a link is replaced, not written through.

Mounting on the host needs root (CAP_SYS_ADMIN in the host's mount namespace) and overlayfs. A
process that is not root gets the same quota in a user and mount namespace of its own
(``sandbox._quota_userns``): the command then runs through ``DiskQuota.enter`` and sees the
overlay at the worktree's own path. ``supported()`` says whether either works here; ``fleet
sandbox doctor`` reports which. A tmpfs left mounted by a process that was killed (its pid is in
the directory name) is unmounted by the next quota; a namespace's goes with its holder.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sandbox import _quota_userns

__all__ = ["DiskQuota", "disk_quota", "doctor_note", "supported"]

PREFIX = "fleet-quota-"
_FULL_BYTES = 64 * 1024  # less than this left on the tmpfs: the command hit the quota
_INODE_BYTES = 4096  # every file costs the host at least a block: bound inodes by bytes too


def supported() -> bool:
    """True when this process can mount the quota's tmpfs and overlay (on the host as root,
    else in a user namespace of its own)."""
    if os.geteuid() != 0:
        return _quota_userns.supported()
    try:
        return "overlay" in Path("/proc/filesystems").read_text()
    except OSError:
        return False


_MNT_DETACH = 2
_MS_NOSUID, _MS_NODEV = 2, 4


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def doctor_note() -> str:
    """How the disk quota is enforced here, for ``fleet sandbox doctor``."""
    if os.geteuid() != 0 and supported():
        return "disk quota via a size-limited tmpfs overlay in a user namespace (not root)"
    if supported():
        return "disk quota via a size-limited tmpfs overlay of the worktree"
    return (
        "no disk quota (needs root, or unprivileged user namespaces, and overlayfs; only the "
        "per-file cap applies)"
    )


def _mount(fstype: str, target: Path, options: str) -> None:
    """mount(2) directly: a ``mount`` process per call would cost ~10 ms, four per run."""
    flags = _MS_NOSUID | _MS_NODEV
    if (
        _libc().mount(
            fstype.encode(), os.fsencode(target), fstype.encode(), flags, options.encode()
        )
        != 0
    ):
        err = ctypes.get_errno()
        raise OSError(err, f"mount -t {fstype} {target}: {os.strerror(err)}")


def _umount(path: Path) -> None:
    # still busy (a process the kill missed): detach it, it goes when the last user does
    if _libc().umount2(os.fsencode(path), 0) != 0:
        _libc().umount2(os.fsencode(path), _MNT_DETACH)


def _reap_stale() -> None:
    """Unmount the quota tmpfs of fleet processes that are gone (kill -9)."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return
    for line in mounts:
        parts = line.split()
        if len(parts) < 2 or PREFIX not in parts[1]:
            continue
        path = Path(parts[1].replace("\\040", " "))
        base = path if path.name.startswith(PREFIX) else path.parent
        pid = base.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _umount(path)
            if base == path:
                shutil.rmtree(base, ignore_errors=True)


@dataclass
class DiskQuota:
    """One run's quota: the command's worktree is ``merged``; its writes land in ``upper``.
    ``enter``: the argv prefix that runs the command where the quota is mounted (empty on the
    host; ``nsenter ...`` into a user namespace's, whose overlay is at the worktree's path)."""

    worktree: Path
    limit: int
    base: Path
    enter: list[str] = field(default_factory=list)

    @property
    def merged(self) -> Path:
        return self.worktree if self.enter else self.base / "merged"

    @property
    def upper(self) -> Path:
        return self.base / "upper"

    def full(self) -> bool:
        """Whether the command used the whole quota (a write past it failed)."""
        st = os.statvfs(self.base)
        return st.f_bavail * st.f_frsize < _FULL_BYTES or st.f_favail == 0

    def used(self) -> int:
        st = os.statvfs(self.base)
        return (st.f_blocks - st.f_bfree) * st.f_frsize


@contextlib.contextmanager
def disk_quota(
    worktree: Path, limit: int | None, *, userns: bool = True, drop_caps: bool = True
) -> Iterator[DiskQuota | None]:
    """The quota overlay of ``worktree`` for one run (``None`` without a limit or support);
    on exit what the command wrote is applied to the worktree and the mounts are gone.
    ``userns``: whether the caller runs its command through ``DiskQuota.enter`` (the quota of
    a process that is not root); ``drop_caps``: whether ``enter`` drops every capability (not
    for bwrap, which makes its own namespaces inside and drops them itself)."""
    if limit is None or not supported():
        yield None
        return
    if os.geteuid() != 0:
        if not userns:
            yield None
            return
        worktree = worktree.resolve()
        with _quota_userns.userns_quota(worktree, limit) as (pid, seen):
            enter = _quota_userns.enter_argv(pid, worktree, drop_caps)
            quota = DiskQuota(worktree, limit, seen, enter)
            try:
                yield quota
            finally:
                apply_upper(quota.upper, worktree)
        return
    _reap_stale()
    worktree = worktree.resolve()
    base = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    size = max(limit, 1 << 20)
    _mount("tmpfs", base, f"size={size},nr_inodes={size // _INODE_BYTES + 64},mode=0700")
    quota = DiskQuota(worktree, limit, base)
    try:
        for name in ("upper", "work", "merged"):
            (base / name).mkdir()
        # mode and owner of the merged root come from upper: make them the worktree's
        st = worktree.stat()
        os.chmod(quota.upper, stat.S_IMODE(st.st_mode))
        os.chown(quota.upper, st.st_uid, st.st_gid)
        # through a link of a plain name: a worktree path with ',' or ':' would split options
        (base / "lower").symlink_to(worktree)
        options = f"lowerdir={base / 'lower'},upperdir={quota.upper},workdir={base / 'work'}"
        _mount("overlay", quota.merged, options)
        try:
            yield quota
        finally:
            _umount(quota.merged)
            apply_upper(quota.upper, worktree)
    finally:
        _umount(base)
        shutil.rmtree(base, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def _opaque(path: str) -> bool:
    for name in ("trusted.overlay.opaque", "user.overlay.opaque"):  # user.: userxattr mounts
        with contextlib.suppress(OSError):
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
    return False


def apply_upper(upper: Path, worktree: Path) -> None:
    """Apply an overlay upper directory onto the lower one it covered (see the module doc)."""
    for dirpath, dirnames, filenames in os.walk(upper):
        rel = os.path.relpath(dirpath, upper)
        dest_dir = worktree if rel == "." else worktree / rel
        if rel != ".":
            if dest_dir.is_symlink() or (dest_dir.exists() and not dest_dir.is_dir()):
                _remove(dest_dir)
            elif _opaque(dirpath) and dest_dir.is_dir():
                shutil.rmtree(dest_dir, ignore_errors=True)
            dest_dir.mkdir(exist_ok=True)
            shutil.copystat(dirpath, dest_dir, follow_symlinks=False)
        for name in [*dirnames, *filenames]:
            src = os.path.join(dirpath, name)
            dest = dest_dir / name
            st = os.lstat(src)
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # whiteout: deleted
                _remove(dest)
            elif stat.S_ISDIR(st.st_mode):
                continue  # walked next
            elif stat.S_ISLNK(st.st_mode):
                _remove(dest)
                os.symlink(os.readlink(src), dest)
            elif stat.S_ISREG(st.st_mode):
                _remove(dest)
                shutil.copy2(src, dest, follow_symlinks=False)
        dirnames[:] = [
            d for d in dirnames if stat.S_ISDIR(os.lstat(os.path.join(dirpath, d)).st_mode)
        ]
