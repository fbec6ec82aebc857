"""Resolution in forked processes: the files to resolve split into contiguous ranges, one per
worker, each resolved by a forked child while the calling process waits. The caller resolves
none itself: the resolver's caches (an entry per distinct chain, with its dependency keys:
~40 MB for half of Django) then live and die in the children, and the caller's peak is the
extraction data plus the compact results.

The resolver is pure Python (it holds the GIL), so threads cannot share it out; a forked child
sees the whole extraction data and the resolver's tables as they are (copy-on-write, nothing
sent down) and sends back only compact columns per file: the targets, the flag bytes, the few
fixture references and the dependency keys (Django: 6.7 MB of pickle, ~0.1 CPU-s both ends).
A file resolves to the same references and keys whatever else the resolver resolved before
(its memo replays the keys it recorded; tests compare forked and serial indexes), so the split
changes nothing in the result. The targets and keys the parent receives are re-interned (one
string object per distinct id, a repository target the symbol's own id string).

Fork only where it is safe: a POSIX ``fork``, and no other thread alive in the process (a child
of a multi-threaded process may inherit a lock held by a thread that does not exist there).
A child that fails (killed, an exception) or a fork refused is not fatal: those files are
resolved by the caller.
"""

from __future__ import annotations

import os
import pickle
import signal
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import IO

from fleet.graph._extract_native import native_module
from fleet.graph._model import FileData
from fleet.graph._procs import stop
from fleet.graph._refs import FileRefs
from fleet.graph._resolve import Resolver

__all__ = ["MIN_FILES", "resolve_files", "workers_for"]

MIN_FILES = 256
"""Below this many files to resolve, one process: a fork and its copy-on-write faults cost
more than half of a small resolution."""

Resolved = tuple[FileRefs, frozenset[str]]
_Row = tuple[list[str | None], bytes, tuple, tuple[str, ...]]


def workers_for(files: int, wanted: int, forced: bool) -> int:
    """How many processes resolve ``files`` files: ``wanted`` (the extraction threads) when
    forking is possible and there are enough files (or ``forced``: ``FLEET_GRAPH_THREADS``
    set), else 1."""
    if wanted <= 1 or files < 2 or not hasattr(os, "fork"):
        return 1
    if threading.active_count() > 1:
        return 1
    return min(wanted, files) if forced or files >= MIN_FILES else 1


def _split(paths: Sequence[str], data: Mapping[str, FileData], parts: int) -> list[list[str]]:
    """Contiguous ranges of about equal raw references each."""
    total = sum(len(data[p].refs) + 1 for p in paths)
    out: list[list[str]] = [[]]
    done = 0
    for rel in paths:
        if done * parts >= total * len(out) and len(out) < parts:
            out.append([])
        out[-1].append(rel)
        done += len(data[rel].refs) + 1
    return [part for part in out if part]


def _child(resolver: Resolver, data: Mapping[str, FileData], part: list[str],
           out: IO[bytes]) -> None:
    """Resolve ``part`` and pickle its columns to ``out``; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        rows: list[_Row] = []
        for rel in part:
            refs, deps = resolver.resolve_with_deps(data[rel])
            rows.append((refs.targets, refs.flags, refs.extra, tuple(deps)))
        pickle.dump(rows, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
        code = 0
    except BaseException:  # the parent resolves this range itself
        code = 1
    finally:
        os._exit(code)  # no atexit handlers, no freeing: the parent owns everything


def resolve_files(resolver: Resolver, data: Mapping[str, FileData], paths: Sequence[str],
                  workers: int) -> dict[str, Resolved]:
    """``resolver.resolve_with_deps`` of each file of ``paths``, in ``workers`` processes."""
    parts = _split(paths, data, workers) if workers > 1 else []
    children: list[tuple[int, list[str], IO[bytes]]] = []
    results: dict[str, Resolved] = {}
    try:
        for part in parts:
            out: IO[bytes] = tempfile.TemporaryFile(prefix="fleet-resolve-")  # noqa: SIM115 - closed in finally
            try:
                pid = os.fork()
            except OSError:  # no process to be had (memory, limits): the caller resolves it
                pid = -1
            if pid == 0:
                _child(resolver, data, part, out)
            children.append((pid, part, out))
        if workers <= 1:
            for rel in paths:
                results[rel] = resolver.resolve_with_deps(data[rel])
        symbols = resolver.symbols
        canon: dict[str, str] = {}  # one string object per distinct external target or key
        native = native_module()
        reintern = native.reintern if native is not None and type(symbols) is dict else None

        def intern(t: str) -> str:
            # a symbol's own id string (not the dict key: a duplicate id keeps its first key)
            sym = symbols.get(t)
            return sym.id if sym is not None else canon.setdefault(t, t)

        while children:
            pid, part, out = children.pop(0)
            rows = _collect(pid, out)
            if rows is None or len(rows) != len(part):
                for rel in part:  # the child failed: resolve its range here
                    results[rel] = resolver.resolve_with_deps(data[rel])
                continue
            for rel, (targets, flags, extra, deps) in zip(part, rows, strict=True):
                if reintern is not None:  # the loop below in C (fanout.c)
                    reintern(targets, symbols, canon)
                    listed = list(deps)
                    reintern(listed, symbols, canon)
                    keys = frozenset(listed)
                else:
                    for i, t in enumerate(targets):  # in place: no second list per file
                        if t is not None:
                            targets[i] = intern(t)
                    keys = frozenset(map(intern, deps))
                results[rel] = (FileRefs(rel, data[rel].refs, targets, flags, extra), keys)
    finally:
        for pid, _, out in children:  # interrupted: stop the children still running
            if pid >= 0:
                stop(pid)
            out.close()
    return results


def _collect(pid: int, out: IO[bytes]) -> list[_Row] | None:
    """The rows child ``pid`` wrote to ``out``, or None when it failed (or never forked)."""
    if pid < 0:
        out.close()
        return None
    try:
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        out.seek(0)
        rows: list[_Row] = pickle.load(out)
        return rows
    except (OSError, EOFError, pickle.UnpicklingError):
        return None
    finally:
        out.close()
