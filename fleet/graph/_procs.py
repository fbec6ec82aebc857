"""``map_in_processes``: a cold index's extraction over files in forked processes, the calling
process being one of them.

Threads share the extraction only as far as the C walk runs without the GIL: building each
file's Python objects (symbols, references, the import table, the facts) holds it, so on the
standard library two threads kept ~1.6 cores busy at best. A forked child holds a GIL of its
own: it extracts a contiguous range of the files and sends the results back pickled through a
temporary file (half of the standard library's extraction data: ~10 MB, ~0.04 CPU-s to load).

Fork only where it is safe, as the forked resolution does (``_fork``): a POSIX ``fork`` and no
other thread alive (a child of a multi-threaded process may inherit a lock held by a thread that
does not exist there); otherwise ``None`` and the caller uses threads. A child that fails (an
exception, killed, a fork refused) is not fatal: the caller extracts its range itself.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import pickle
import signal
import struct
import tempfile
import threading
from collections.abc import Callable, Sequence
from typing import IO, TypeVar, cast

__all__ = ["forkable", "map_in_processes", "stop"]

T = TypeVar("T")
R = TypeVar("R")

_SLOT = struct.Struct("q")
_CHUNK = 64  # files per pickle a child writes


def forkable() -> bool:
    """Whether this process may fork workers now: POSIX ``fork`` and no other thread alive."""
    return hasattr(os, "fork") and threading.active_count() == 1


def map_in_processes(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[R] | None:
    """``[fn(x) for x in items]`` in ``workers`` processes: the caller and ``workers - 1``
    forked children take the items one at a time from a counter they share (so no process
    waits on another's share), each child sending its results back when it runs out.
    ``progress(finished, i)`` is called in the caller after each item ``i`` it did itself, with
    how many items all the processes have finished so far. None (nothing called) when forking
    is not possible here: the caller then maps another way."""
    if workers <= 1 or len(items) < 2 or not forkable():
        return None
    # slot 0: the next item to take; slot k: how many items process k finished
    shared = mmap.mmap(-1, _SLOT.size * (workers + 1))
    # lockf on it: one holder per process at a time (a forked child has locks of its own)
    lock = tempfile.TemporaryFile(prefix="fleet-extract-lock-")  # noqa: SIM115 - closed in finally
    slots: list[R | None] = [None] * len(items)
    taken = [False] * len(items)
    children: list[tuple[int, IO[bytes]]] = []
    try:
        for slot in range(1, workers):
            out: IO[bytes] = tempfile.TemporaryFile(prefix="fleet-extract-")  # noqa: SIM115 - closed in finally
            try:
                pid = os.fork()
            except OSError:  # no process to be had (memory, limits): fewer workers
                out.close()
                break
            if pid == 0:
                _child(fn, items, out, shared, lock, slot + 1)
            children.append((pid, out))
        mine = 0
        # Each child's count only grows, but a read can see 0: ``pack_into`` clears the slot
        # before it writes the new count (a progress that went 159 -> 107 in a test, 7 Dec).
        counts = [0] * len(children)
        while (i := _take(shared, lock, len(items))) is not None:
            slots[i] = fn(items[i])
            taken[i] = True
            mine += 1
            if progress is not None:
                for k in range(len(children)):
                    counts[k] = max(counts[k], _SLOT.unpack_from(shared, _SLOT.size * (k + 2))[0])
                progress(mine + sum(counts), i)
        while children:
            pid, out = children[0]
            for i, result in _collect(pid, out):
                slots[i] = cast(R, result)
                taken[i] = True
            children.pop(0)
            out.close()
        for i, done in enumerate(taken):
            if not done:  # a child failed: its items are done here
                slots[i] = fn(items[i])
    finally:
        for pid, out in children:  # interrupted: stop the children still running
            stop(pid)
            out.close()
        lock.close()
        shared.close()
    return slots  # type: ignore[return-value]


def stop(pid: int) -> None:
    """Kill forked child ``pid`` and reap it (one that already ended is only reaped)."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


def _take(shared: mmap.mmap, lock: IO[bytes], count: int) -> int | None:
    """The next item's index from the shared counter, or None when all are taken."""
    fcntl.lockf(lock, fcntl.LOCK_EX)
    try:
        i = _SLOT.unpack_from(shared, 0)[0]
        if i >= count:
            return None
        _SLOT.pack_into(shared, 0, i + 1)
        return int(i)
    finally:
        fcntl.lockf(lock, fcntl.LOCK_UN)


def _child(fn: Callable[[T], R], items: Sequence[T], out: IO[bytes], shared: mmap.mmap,
           lock: IO[bytes], slot: int) -> None:
    """``fn`` over the items it takes, ``(index, result)`` pairs pickled to ``out``, how many
    it finished in ``slot`` of ``shared``; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        results = []
        finished = 0
        while (i := _take(shared, lock, len(items))) is not None:
            results.append((i, fn(items[i])))
            finished += 1
            _SLOT.pack_into(shared, _SLOT.size * slot, finished)
            if len(results) == _CHUNK:  # pickled as it goes: little is left to do at the end
                pickle.dump(results, out, protocol=pickle.HIGHEST_PROTOCOL)
                results = []
        pickle.dump(results, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
        code = 0
    except BaseException:  # the caller does this child's items itself
        code = 1
    finally:
        os._exit(code)  # no atexit handlers, no freeing: the parent owns everything


def _collect(pid: int, out: IO[bytes]) -> list[tuple[int, object]]:
    """The ``(index, result)`` pairs child ``pid`` wrote to ``out``; none when it failed."""
    try:
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return []
        out.seek(0)
        results: list[tuple[int, object]] = []
        size = os.fstat(out.fileno()).st_size
        while out.tell() < size:
            results.extend(pickle.load(out))
    except (OSError, EOFError, pickle.UnpicklingError, TypeError):
        return []
    return results
