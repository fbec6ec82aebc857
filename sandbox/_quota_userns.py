"""The disk quota without root: the same tmpfs overlay, in a user and mount namespace of our own.

A process that is not root cannot mount on the host, but it can create a user namespace (uid 0
inside, mapped to its own uid) with a mount namespace, and mount a size-limited tmpfs and an
overlay (``userxattr``, Linux >= 5.11) there. A small holder process does that, binds the
overlay over the worktree's own path inside the namespace (so an absolute path to the worktree
is quota-bound too), says ``ready <pid>`` and waits on its stdin. The command runs inside
through ``nsenter --user --mount`` (for ``local`` and the microVM's QEMU with every capability
dropped: it cannot unmount the overlay); bwrap nests its own namespace in it. The host reads
what the command wrote through ``/proc/<holder>/root`` and applies it to the worktree as the
root quota does; when the host closes the holder's stdin (or dies) the namespace and its tmpfs
are gone, so nothing can be left mounted.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["enter_argv", "supported", "userns_quota"]

PREFIX = "fleet-quota-"
_INODE_BYTES = 4096

# argv: base worktree size inodes. Mounts the tmpfs at base, the overlay at base/merged, binds
# it over the worktree, reports, and holds the namespace until its stdin closes.
_HOLDER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def mount(src, tgt, fs, flags, opts):
    if libc.mount(src.encode(), tgt.encode(), fs.encode() if fs else None, flags,
                  opts.encode() if opts else None) != 0:
        err = ctypes.get_errno()
        print("mount", fs or "--bind", tgt, os.strerror(err), flush=True)
        sys.exit(1)
base, work, size, inodes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
mount("tmpfs", base, "tmpfs", 6, f"size={size},nr_inodes={inodes},mode=0700")
for name in ("upper", "work", "merged"):
    os.mkdir(f"{base}/{name}")
os.chmod(f"{base}/upper", os.stat(work).st_mode & 0o7777)
os.symlink(work, f"{base}/lower")
mount("overlay", f"{base}/merged", "overlay", 6,
      f"lowerdir={base}/lower,upperdir={base}/upper,workdir={base}/work,userxattr")
mount(f"{base}/merged", work, None, 4096 | 16384, None)  # MS_BIND | MS_REC
print("ready", os.getpid(), flush=True)
sys.stdin.read()
"""


def _tools() -> tuple[str, str] | None:
    unshare, nsenter = shutil.which("unshare"), shutil.which("nsenter")
    return None if unshare is None or nsenter is None else (unshare, nsenter)


@functools.cache
def supported() -> bool:
    """True when this (non-root) process can hold a quota namespace: one trial holder."""
    if os.geteuid() == 0 or _tools() is None:
        return False
    try:
        if "overlay" not in Path("/proc/filesystems").read_text():
            return False
        with tempfile.TemporaryDirectory() as work, userns_quota(Path(work), 1 << 20):
            return True
    except OSError:
        return False


def enter_argv(pid: int, workdir: Path, drop_caps: bool) -> list[str]:
    """The prefix that runs a command in holder ``pid``'s namespaces, as our own uid, in
    ``workdir`` as the namespace sees it (a cwd inherited from the host is the bare worktree)."""
    tools = _tools()
    assert tools is not None
    argv = [tools[1], "-t", str(pid), "--user", "--mount", "--preserve-credentials", "--"]
    if drop_caps:
        setpriv = shutil.which("setpriv") or "setpriv"
        argv += [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]
    # nsenter's own --wd resolves the directory before it enters: the bare worktree
    return [*argv, "/bin/sh", "-c", 'cd "$0" || exit 126; exec "$@"', str(workdir)]


@contextlib.contextmanager
def userns_quota(worktree: Path, limit: int) -> Iterator[tuple[int, Path]]:
    """Start a holder for ``worktree`` with a ``limit``-byte tmpfs: ``(pid, base as the host
    sees it)``; ``OSError`` when the namespace or a mount is refused."""
    tools = _tools()
    if tools is None:
        raise OSError("unshare and nsenter (util-linux) are needed for the disk quota")
    size = max(limit, 1 << 20)
    base = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    argv = [tools[0], "--user", "--map-root-user", "--mount", "--propagation", "private"]
    argv += [sys.executable, "-I", "-S", "-c", _HOLDER, str(base), str(worktree.resolve())]
    argv += [str(size), str(size // _INODE_BYTES + 64)]
    holder = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline().split()
        if line[:1] != ["ready"]:
            rest = holder.stdout.read()
            raise OSError(f"disk quota namespace: {' '.join(line)} {rest}".strip())
        pid = int(line[1])
        yield pid, Path(f"/proc/{pid}/root{base}")
    finally:
        with contextlib.suppress(OSError):
            assert holder.stdin is not None
            holder.stdin.close()
        try:
            holder.wait(timeout=10)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
        shutil.rmtree(base, ignore_errors=True)
