"""A snapshot written by a forked child while the caller goes on.

``fleet index -o`` saves the graph (Django: ~0.3-0.4 s of pickling and writing 41 MB) and then
computes the summary's counts and the graph's condensation (~0.1-0.15 s), both serial after the
extraction the cores shared. Where the index may use more than one process (``threads()``) and
the process may fork (``_procs.forkable``: no other thread alive), a forked child writes the
snapshot, seeing the graph as it is (copy-on-write, nothing sent down), while the caller
computes the summary; :meth:`PendingSave.wait` then reaps it. The child writes the file
atomically as :func:`_persist.save` does (temp file + rename), so a child that fails or is
killed leaves the previous snapshot in place (its temp file removed by whoever sees the
failure); its error comes back through a pipe as one line, raised in the caller as
:class:`SnapshotError`. Otherwise (one process wanted, threads alive, a fork refused) the save
is done in the caller before :func:`save_started` returns, as before.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from pathlib import Path

from fleet.graph._extract_native import threads
from fleet.graph._graph import SymbolGraph
from fleet.graph._persist import SnapshotError, save, temp_path
from fleet.graph._procs import forkable, stop

__all__ = ["MIN_FILES", "PendingSave", "check_writable", "save_failure", "save_started"]

_MESSAGE_BYTES = 4000
MIN_FILES = 256
"""Below this many files the save takes a few milliseconds: not worth a fork."""


def save_failure(path: Path, exc: BaseException) -> SnapshotError:
    """One line naming the snapshot that could not be written and why."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if isinstance(exc, FileExistsError):  # ``mkdir(exist_ok=True)`` of a folder that is a file
        reason = "Not a directory"
    where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
    return SnapshotError(f"could not write the graph snapshot {path}: {reason}{where}")


def check_writable(path: Path) -> None:
    """Raise :class:`SnapshotError` (one line) unless a snapshot could be written at ``path``:
    not a directory itself, and its nearest existing folder one this process may create files
    in (nothing is created). Checked before an index starts, so a ``-o`` that cannot be
    written fails in a second, not after the whole index."""
    try:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "it is a directory", str(path))
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(folder))
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "Permission denied", str(folder))
    except OSError as exc:
        raise save_failure(path, exc) from None


class PendingSave:
    """A save under way in child ``pid`` (``None``: already done in the caller)."""

    def __init__(self, path: Path, pid: int | None = None, errors: int | None = None) -> None:
        self.path, self.pid, self._errors = path, pid, errors

    @property
    def forked(self) -> bool:
        return self.pid is not None

    def wait(self) -> Path:
        """The snapshot's path once written; :class:`SnapshotError` with the child's reason
        when it could not be (the previous snapshot, if any, is left as it was)."""
        if self.pid is None:
            return self.path
        pid, errors = self.pid, self._errors
        assert errors is not None
        self.pid = self._errors = None
        try:
            message = _read_all(errors)
            _, status = os.waitpid(pid, 0)
        except BaseException:  # interrupted while waiting: no child left behind
            stop(pid)
            _remove(temp_path(self.path))
            raise
        finally:
            os.close(errors)
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            return self.path
        _remove(temp_path(self.path))
        if message:
            raise SnapshotError(message)
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        raise SnapshotError(f"could not write the graph snapshot {self.path}: the process "
                            f"writing it ended ({how})")

    def cancel(self) -> None:
        """Stop a save still under way (its temp file removed)."""
        if self.pid is not None and self._errors is not None:
            stop(self.pid)
            os.close(self._errors)
            self.pid = self._errors = None
            _remove(temp_path(self.path))


def save_started(graph: SymbolGraph, path: Path, repository: str = "", *,
                 min_files: int = MIN_FILES) -> PendingSave:
    """``graph.save(path, repository)`` in a forked child when more than one process may work,
    the graph has at least ``min_files`` files and the process may fork, else here;
    :meth:`PendingSave.wait` for its end. An error of a save done here is raised as
    :class:`SnapshotError` (:func:`save_failure`)."""
    if threads() > 1 and len(graph.files) >= min_files and forkable():
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no process to be had: saved here instead
            os.close(read_end)
            os.close(write_end)
        else:
            if pid == 0:
                os.close(read_end)
                _child(graph, path, repository, write_end)
            os.close(write_end)
            return PendingSave(path, pid, read_end)
    try:
        save(graph, path, repository)
    except OSError as exc:
        _remove(temp_path(path))
        raise save_failure(path, exc) from None
    return PendingSave(path)


def _child(graph: SymbolGraph, path: Path, repository: str, errors: int) -> None:
    """Write the snapshot; its error, if any, as one line to ``errors``. Never returns."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # ^C ends it; the caller cleans up
        save(graph, path, repository)
        code = 0
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            failure = save_failure(path, exc) if isinstance(exc, OSError) else SnapshotError(
                f"could not write the graph snapshot {path}: {type(exc).__name__}: {exc}")
            os.write(errors, str(failure).encode(errors="replace")[:_MESSAGE_BYTES])
            _remove(temp_path(path))
    finally:
        os._exit(code)  # no atexit handlers, no flushing of the caller's buffers, no freeing


def _read_all(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace").strip()


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
