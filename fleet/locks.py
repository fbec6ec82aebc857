"""Advisory file locks that keep fleet processes sharing one state directory apart.

``flock(2)`` locks: held by an open file, released by the kernel when the process ends however it
ends (kill -9 included), so a crashed sweep never leaves a lock behind. The lock file records the
holder's pid and what it is doing, for the one-line refusal of :func:`try_lock`.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Held", "hold", "try_lock"]


@dataclass(frozen=True)
class Held:
    """The lock is taken: by ``holder`` (``pid: what``, as its holder wrote it)."""

    path: Path
    holder: str


def _open(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)


def _stamp(fd: int, what: str) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}: {what} (since {time.strftime('%H:%M:%S')})\n".encode(), 0)


@contextmanager
def hold(path: Path, what: str) -> Iterator[None]:
    """Hold the lock at ``path`` for the block, waiting for it as long as it takes."""
    fd = _open(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _stamp(fd, what)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def try_lock(path: Path, what: str) -> Iterator[Held | None]:
    """Take the lock at ``path`` for the block if it is free: yields ``None`` when taken (and
    holds it until the block ends), a :class:`Held` naming the holder when another has it."""
    fd = _open(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "another process"
            yield Held(path, holder)
            return
        _stamp(fd, what)
        yield None
    finally:
        os.close(fd)
