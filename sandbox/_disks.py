"""Block-device transport for the microVM: what Firecracker (no 9p, no virtiofs) needs.

The worktree and the run's control files travel into the guest as tar archives on raw disks,
the toolchain as read-only ext4 images (``mkfs.ext4 -d DIR``, no root needed) cached per
toolchain fingerprint under the user's cache dir, and the result comes back as one tar on an
output disk: ``.ctl/<file>`` members (exit code, streams, limit, peak) and the worktree's members
under its path relative to ``/``. ``apply_output`` writes the worktree part back to the host,
only inside the worktree: absolute names, ``..``, links or symlinks leading out of it, device
nodes and writes through a host symlink are refused and reported, never applied.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tarfile
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from sandbox._guest_image import GuestImageError, cache_root

MKFS_HINT = "apt-get install e2fsprogs"
_SECTOR = 512


def _fingerprint(root: Path, depth: int = 2) -> str:
    """A cheap fingerprint of a directory: names, sizes and mtimes down to ``depth`` levels.

    Installing or upgrading a package touches its directories' mtimes, so this catches the
    changes that matter without walking a multi-gigabyte tree on every run.
    """
    h = hashlib.sha256(str(root).encode())
    level = [root]
    for _ in range(depth + 1):
        nxt: list[Path] = []
        for d in level:
            with contextlib.suppress(OSError):
                for entry in sorted(os.scandir(d), key=lambda e: e.name):
                    st = entry.stat(follow_symlinks=False)
                    h.update(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}\n".encode())
                    if entry.is_dir(follow_symlinks=False):
                        nxt.append(Path(entry.path))
        level = nxt
    return h.hexdigest()[:20]


def _tree_size(root: Path) -> tuple[int, int]:
    total, count = 0, 0
    for dirpath, dirnames, filenames in os.walk(root):
        count += 1 + len(dirnames) + len(filenames)
        for name in filenames:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total, count


def toolchain_image(root: Path) -> Path:
    """The read-only ext4 image of ``root``, built with ``mkfs.ext4 -d`` on first use, cached."""
    root = root.resolve()
    out_dir = cache_root().parent / "toolchain"
    image = out_dir / f"{root.name or 'root'}-{_fingerprint(root)}.ext4"
    if image.exists():
        return image
    mkfs = shutil.which("mkfs.ext4") or shutil.which("mke2fs")
    if mkfs is None:
        raise GuestImageError(f"mkfs.ext4 not found (needed for the block transport): {MKFS_HINT}")
    size, count = _tree_size(root)
    size_mb = (size * 5 // 4 + count * 4096 + 64 * 1024**2) // 1024**2
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = image.with_name(f"{image.name}.tmp{os.getpid()}-{threading.get_ident()}")
    cmd = [mkfs, "-q", "-F", "-t", "ext4", "-O", "^has_journal", "-N", str(count + 1024)]
    cmd += ["-E", "root_owner=0:0", "-L", "fleet-tc", "-d", str(root), str(tmp), f"{size_mb}M"]
    done = subprocess.run(cmd, capture_output=True, text=True, env={"PATH": "/usr/sbin:/sbin"})
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise GuestImageError(f"mkfs.ext4 -d {root} failed: {done.stderr.strip()[-500:]}")
    tmp.replace(image)
    return image


def _pad(path: Path, minimum: int = 0) -> None:
    """Round a raw disk up to whole sectors (and at least ``minimum`` bytes), sparsely."""
    size = max(path.stat().st_size, minimum)
    with path.open("r+b") as f:
        f.truncate(-(-size // _SECTOR) * _SECTOR)


def write_ctl_disk(path: Path, files: dict[str, str]) -> None:
    """A tar disk of the run's control files, extracted by the guest init into ``/.ctl``."""
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f".ctl/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    _pad(path)


@dataclass
class Snapshot:
    """What went into the guest: relative path -> (size, mtime seconds) of regular files."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    other: set[str] = field(default_factory=set)  # directories and symlinks


def write_work_disk(path: Path, work: Path) -> Snapshot:
    """Tar the worktree (symlinks as symlinks, never followed) onto a raw disk."""
    snap = Snapshot()

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        rel = info.name.removeprefix("./")
        if info.isfile():
            snap.files[rel] = (info.size, int(info.mtime))
        elif info.isdir() or info.issym():
            snap.other.add(rel)
        else:
            return None  # fifos, devices, sockets stay on the host
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        tar.add(str(work), arcname=".", recursive=True, filter=keep)
    _pad(path)
    return snap


def make_output_disk(path: Path, size: int) -> None:
    """A sparse, zeroed disk the guest writes its result tar onto (costs no host space)."""
    path.touch()
    _pad(path, size)


@dataclass
class Applied:
    """What ``apply_output`` did: members written, deleted, and refused (with why)."""

    written: int = 0
    deleted: int = 0
    refused: list[str] = field(default_factory=list)


def _safe_rel(name: str, prefix: str) -> str | None:
    """``name`` relative to the worktree prefix, or None if it is absolute or uses ``..``."""
    if name.startswith("/") or "\\" in name:
        return None
    parts = PurePosixPath(name).parts
    if ".." in parts:
        return None
    pre = PurePosixPath(prefix).parts
    if parts[: len(pre)] != pre:
        return None
    return "/".join(parts[len(pre) :])


def _no_symlink_parents(work: Path, rel: str) -> bool:
    """True if every existing parent of ``rel`` under ``work`` is a real directory."""
    cur = work
    for part in PurePosixPath(rel).parts[:-1]:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return True
        if not stat.S_ISDIR(st.st_mode):
            return False
    return True


def _link_stays_inside(rel: str, target: str) -> bool:
    if target.startswith("/"):
        return False
    joined = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return not (joined == ".." or joined.startswith("../"))


def read_ctl(disk: Path, ctl: Path, caps: dict[str, int]) -> None:
    """Copy the result files (``.ctl/<name>``) of the output tar into ``ctl``, capped."""
    with tarfile.open(disk, "r:") as tar:
        for member in tar:
            name = member.name.removeprefix("./")
            if not name.startswith(".ctl/") or not member.isfile():
                continue
            base = name.removeprefix(".ctl/")
            if "/" in base or base in ("", ".", ".."):
                continue
            src = tar.extractfile(member)
            assert src is not None
            cap = caps.get(base)
            (ctl / base).write_bytes(src.read() if cap is None else src.read(cap + 1))


def apply_output(disk: Path, work: Path, snapshot: Snapshot) -> Applied:
    """Apply the guest's worktree (members under ``work`` relative to ``/``) to the host.

    Unchanged files (same size and mtime as they went in) are left alone; files that went in and
    are missing from the result are deleted; everything that would land outside ``work`` is
    refused and listed in ``Applied.refused``.
    """
    work = work.resolve()
    prefix = str(work).lstrip("/")
    done = Applied()
    seen: set[str] = set()
    blocked: set[str] = set()  # refused members: nothing is applied under them either
    with tarfile.open(disk, "r:") as tar:
        for member in tar:
            name = member.name.removeprefix("./").rstrip("/")
            if name.startswith(".ctl/") or name == ".ctl":
                continue
            rel = _safe_rel(name, prefix)
            if rel is None:
                parts = PurePosixPath(name).parts
                if not (member.isdir() and PurePosixPath(prefix).parts[: len(parts)] == parts):
                    done.refused.append(f"{member.name}: outside the worktree")
                continue  # else: a parent directory of the worktree itself
            if rel == "":
                continue
            seen.add(rel)
            parents = {"/".join(PurePosixPath(rel).parts[:i]) for i in range(1, rel.count("/") + 1)}
            if parents & blocked:
                why: str | None = "inside a refused member"
            else:
                why = _apply_member(tar, member, work, rel, snapshot, disk)
            if member.isfile():
                _release(disk, member)  # applied or refused: the host no longer needs it
            if why is None:
                done.written += 1
            elif why != "unchanged":
                blocked.add(rel)
                done.refused.append(f"{member.name}: {why}")
    done.deleted = _delete_missing(work, snapshot, seen)
    return done


_PUNCH_HOLE = 0x01 | 0x02  # FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _punch(disk: Path, offset: int, size: int) -> None:
    """Give the host back the output disk's whole blocks in ``[offset, offset + size)`` (a best
    effort: a file system without hole punching keeps them until the disk goes after the run)."""
    start, end = -(-offset // 4096) * 4096, (offset + size) // 4096 * 4096
    if end <= start:
        return
    fd = os.open(disk, os.O_WRONLY)
    try:
        _libc().fallocate(fd, _PUNCH_HOLE, ctypes.c_long(start), ctypes.c_long(end - start))
    finally:
        os.close(fd)


def _release(disk: Path, member: tarfile.TarInfo) -> None:
    """A member applied or refused: the host no longer needs its blocks on the output disk."""
    _punch(disk, member.offset_data, member.size)


def _copy_releasing(src: IO[bytes], out: IO[bytes], disk: Path, offset: int) -> None:
    """Copy a member out of the output disk in 1 MiB chunks, punching each chunk out of the
    disk once written: the disk and the worktree never hold the guest's writes twice."""
    done = 0
    while chunk := src.read(1 << 20):
        out.write(chunk)
        out.flush()
        _punch(disk, offset + done, len(chunk))
        done += len(chunk)


def _apply_member(
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    work: Path,
    rel: str,
    snap: Snapshot,
    disk: Path | None = None,
) -> str | None:
    target = work / rel
    if not _no_symlink_parents(work, rel):
        return "a parent is a symlink or not a directory on the host"
    target.parent.mkdir(parents=True, exist_ok=True)  # no symlink on the way: stays inside
    existing = None
    with contextlib.suppress(FileNotFoundError):
        existing = os.lstat(target)
    if member.isdir():
        if existing is not None and not stat.S_ISDIR(existing.st_mode):
            return "a directory over a host file or symlink"
        target.mkdir(exist_ok=True)
        return "unchanged" if existing is not None else None
    if member.issym():
        host_link = existing is not None and stat.S_ISLNK(existing.st_mode)
        if host_link and os.readlink(target) == member.linkname:
            return "unchanged"  # e.g. the host's own link, carried through untouched
        if not _link_stays_inside(rel, member.linkname):
            return f"symlink to {member.linkname!r} leads outside the worktree"
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            return "a symlink over a host directory"
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        os.symlink(member.linkname, target)
        return None
    if member.islnk():
        src_rel = _safe_rel(member.linkname.removeprefix("./"), str(work).lstrip("/"))
        ok = src_rel is not None and src_rel != "" and _no_symlink_parents(work, src_rel)
        src = work / src_rel if ok and src_rel is not None else None
        if src is None or not src.is_file() or src.is_symlink():
            return f"hard link to {member.linkname!r} outside the worktree"
        data_src: IO[bytes] | None = src.open("rb")
        mode = src.stat().st_mode & 0o777
    elif member.isfile():
        same = snap.files.get(rel) == (member.size, int(member.mtime))
        if same and existing is not None and stat.S_ISREG(existing.st_mode):
            return "unchanged"
        data_src = tar.extractfile(member)
        mode = member.mode & 0o777
    else:
        return "not a regular file, directory or symlink"
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        return "a file over a host directory"
    with contextlib.suppress(FileNotFoundError):
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            target.unlink()  # replace a symlink, never write through it
    assert data_src is not None
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as out, data_src:
        if member.isfile() and disk is not None:
            _copy_releasing(data_src, out, disk, member.offset_data)
        else:
            shutil.copyfileobj(data_src, out)
        os.fchmod(out.fileno(), mode)
    if member.isfile():
        os.utime(target, (member.mtime, member.mtime), follow_symlinks=False)
    return None


def _delete_missing(work: Path, snap: Snapshot, seen: set[str]) -> int:
    deleted = 0
    for rel in sorted(set(snap.files) | snap.other, key=lambda r: -r.count("/")):
        if rel in seen or rel in ("", "."):
            continue
        target = work / rel
        if not _no_symlink_parents(work, rel):
            continue
        with contextlib.suppress(OSError):
            st = os.lstat(target)
            if stat.S_ISDIR(st.st_mode):
                target.rmdir()
            else:
                target.unlink()
            deleted += 1
    return deleted


__all__ = [
    "Applied",
    "Snapshot",
    "apply_output",
    "make_output_disk",
    "read_ctl",
    "toolchain_image",
    "write_ctl_disk",
    "write_work_disk",
]
