"""``index``: walk a repository, extract every source file, resolve, build the graph.

Files come from ``git ls-files`` (tracked and untracked-but-not-ignored) when the root is a git
work tree, else from a walk that never follows symlinks (so symlink loops cannot trap it) and
skips VCS, virtualenv and cache directories. With ``previous``, a file whose content hash (and
module name) is unchanged is not re-parsed. When no file came or went, only the changed files
and the files whose recorded dependency keys meet the changed files' interface keys (symbols
added, removed or renamed, imports and re-exports, base lists, fixtures: see ``_affected``) are
re-resolved; every other file keeps its references.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fleet.errors import FleetError
from fleet.graph._affected import affected_files
from fleet.graph._extract import extract, forget_shared_locals
from fleet.graph._extract_native import available as native_available
from fleet.graph._extract_native import threaded as native_threaded
from fleet.graph._extract_native import threads as native_threads
from fleet.graph._fork import resolve_files, workers_for
from fleet.graph._graph import SymbolGraph
from fleet.graph._lang import LANGUAGE_NAMES, LanguageSpec, spec_for
from fleet.graph._model import FileData, FileRecord, Reference
from fleet.graph._pool import map_in_threads
from fleet.graph._procs import map_in_processes
from fleet.graph._resolve import Resolver, python_module_names
from fleet.graph._shared import count_lines, gc_paused, release_free_memory

__all__ = [
    "MAX_FILE_BYTES",
    "IndexingError",
    "Phase",
    "Progress",
    "gc_paused",
    "index",
    "read_source",
    "source_files",
]

Progress = Callable[[int, int, str], None]
"""``progress(done, total, path)``, called after each file."""
Phase = Callable[[str], None]
"""``phase(name)``, called as each phase starts: ``index`` (files), ``resolve``, ``graph``."""

_SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".fleet", ".eggs",
})
_MINIFIED_LINE = 2_000  # average bytes per line above which a big file is generated/minified


class IndexingError(FleetError):
    """The repository root cannot be indexed at all (missing or not a directory)."""


def _git_files(root: Path) -> list[str] | None:
    if not (root / ".git").exists():
        return None
    from fleet.forge._git import run as run_git  # the one git module (only for git trees)

    try:
        proc = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                       timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    out = proc.stdout
    return sorted({p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p})


def _walk_files(root: Path) -> list[str]:
    """Every file under ``root`` (as ``os.walk`` lists them: symlinks to files included, never
    entering a symlinked directory), without the skipped directories; one ``scandir`` per
    directory and relative paths built as strings."""
    out: list[str] = []
    stack: list[tuple[str, str]] = [(os.fspath(root), "")]
    while stack:
        top, prefix = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if not is_dir:
                out.append(prefix + entry.name)
            elif entry.name not in _SKIP_DIRS and not entry.is_symlink():
                stack.append((entry.path, f"{prefix}{entry.name}/"))
    return sorted(out)


def _excluded(path: str, patterns: tuple[str, ...]) -> bool:
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatchcase(prefix, pat) or fnmatch.fnmatchcase(part, pat)
        for pat in patterns for prefix, part in zip(prefixes, parts, strict=True)
    )


def source_files(root: Path, languages: frozenset[str] | None = None,
                 exclude: Iterable[str] = ()) -> list[str]:
    """Repository-relative POSIX paths of the files some enabled language serves, minus those
    where a path prefix or a path component matches an ``exclude`` glob."""
    files = _git_files(root)
    if files is None:
        files = _walk_files(root)
    patterns = tuple(exclude)
    return [
        p for p in files
        if spec_for(p, languages) is not None and not (patterns and _excluded(p, patterns))
    ]


def _read(root: Path, rel: str, language: str, max_bytes: int
          ) -> tuple[FileRecord, bytes | None]:
    full = os.path.join(root, rel)
    try:
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            return FileRecord(rel, language, "", 0, 0, "skipped", "symlink"), None
        if not stat.S_ISREG(st.st_mode):
            return FileRecord(rel, language, "", 0, 0, "skipped", "not a regular file"), None
        if st.st_size > max_bytes:
            return FileRecord(rel, language, "", 0, st.st_size, "skipped",
                              f"too large: {st.st_size} bytes > cap {max_bytes}"), None
        with open(full, "rb") as fh:
            src = fh.read()
    except OSError as exc:
        return FileRecord(rel, language, "", 0, 0, "skipped", f"unreadable: {exc}"), None
    digest = hashlib.sha256(src).hexdigest()
    lines = count_lines(src)
    if b"\0" in src[:8192]:
        return FileRecord(rel, language, digest, lines, len(src), "skipped", "binary"), None
    if len(src) > 100_000 and len(src) / max(lines, 1) > _MINIFIED_LINE:
        return FileRecord(rel, language, digest, lines, len(src), "skipped",
                          "generated or minified: very long lines"), None
    return FileRecord(rel, language, digest, lines, len(src), "ok"), src


_RACY_NS = 2_000_000_000


def _signature(full: str, now: int) -> tuple[int, ...] | None:
    """``lstat``'s (size, mtime, ctime, inode, device, mode) of a file, or None when it was
    changed within 2 s of ``now`` (a write in the same clock tick would leave the signature as
    it was: git's racy-clean case) or cannot be stat'ed. An unchanged signature is an unchanged
    file (a write moves ctime, which no user can set back)."""
    try:
        st = os.lstat(full)
    except OSError:
        return None
    if now - max(st.st_mtime_ns, st.st_ctime_ns) < _RACY_NS:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode)


MAX_FILE_BYTES = 1_000_000
"""The size cap of one source file (``index``'s ``max_file_bytes`` default)."""


def read_source(root: str | Path, rel: str, max_bytes: int = MAX_FILE_BYTES
                ) -> tuple[bytes | None, str]:
    """The one reader of repository source files, shared by the index, the campaign matchers,
    the codemods and the gates: ``(bytes, "")``, or ``(None, reason)`` with the per-file reason
    ``fleet index`` prints (``symlink``, ``not a regular file``, ``too large: N bytes > cap M``,
    ``unreadable: ...``, ``binary``). Never follows a symlink (a link to ``/dev/zero``, a FIFO,
    outside the repository, dangling or looping is refused by ``lstat`` before any ``open``),
    never opens a device or FIFO, never reads past the cap."""
    real_root = os.path.realpath(root)
    parent = os.path.realpath(os.path.dirname(os.path.join(real_root, rel)))
    if parent != real_root and not parent.startswith(real_root + os.sep):
        return None, "symlink"  # a directory link on the way leaves the repository
    record, src = _read(Path(root), rel, "", max_bytes)
    return src, record.reason


def index(repo: str | Path, previous: SymbolGraph | None = None, *,
          languages: frozenset[str] | set[str] | None = None, max_file_bytes: int = 1_000_000,
          progress: Progress | None = None, exclude: Iterable[str] = (),
          phase: Phase | None = None) -> SymbolGraph:
    """Index ``repo`` into a ``SymbolGraph``. Bad files never raise: they are recorded with
    status ``skipped`` (binary, too large, generated, symlink, unreadable) or ``partial``
    (syntax errors, invalid UTF-8: what parsed is kept). Raises ``FleetError`` only when the
    root itself is not a readable directory. ``exclude``: globs matched against each path
    prefix and path component (``site-packages``, ``docs/*``). ``progress(done, total, path)``
    is called after each file; ``phase(name)`` as each phase starts (``index``, ``resolve``,
    ``graph``: SCCs and lock ranks)."""
    with gc_paused():
        return _index(repo, previous, languages=languages, max_file_bytes=max_file_bytes,
                      progress=progress, exclude=exclude, phase=phase)


def _workers(files: int) -> int:
    """Extraction processes (or threads): ``_extract_native.threads()`` (``FLEET_GRAPH_THREADS``,
    else one per usable core) when the repository is big enough for them to pay, else 1."""
    wanted = os.environ.get("FLEET_GRAPH_THREADS")
    if wanted is not None and not wanted.strip().isdigit():
        raise IndexingError(f"FLEET_GRAPH_THREADS={wanted!r}: not a number")
    native_available()  # loads the extension here, before any fork or thread
    return native_threads() if files >= 64 or wanted is not None else 1


def _in_threads() -> bool:
    """Whether threads share the extraction out: the C extractor loaded to parse without the
    GIL (where forked processes cannot be had)."""
    return native_available() and native_threaded()


def _index(repo: str | Path, previous: SymbolGraph | None = None, *,
          languages: frozenset[str] | set[str] | None = None, max_file_bytes: int = 1_000_000,
          progress: Progress | None = None, exclude: Iterable[str] = (),
          phase: Phase | None = None) -> SymbolGraph:
    started = time.perf_counter()
    if phase is not None:
        phase("index")
    root = Path(repo).resolve()
    if not root.is_dir():
        raise IndexingError(f"cannot index {repo}: not a directory")
    langs = frozenset(languages) if languages is not None else None
    if langs is not None and not langs <= LANGUAGE_NAMES:
        raise IndexingError(f"unknown languages {sorted(langs - LANGUAGE_NAMES)}; "
                          f"known: {sorted(LANGUAGE_NAMES)}")
    paths = source_files(root, langs, exclude)
    prev_data = previous._data if previous is not None and previous.root == root else {}
    # the same files as the previous index: its module names and module table still hold
    same_files = bool(prev_data) and list(previous.files) == paths  # type: ignore[union-attr]
    if same_files:
        modules = {p: m for p, m in previous.modules.items() if m is not None}  # type: ignore[union-attr]
    else:
        modules = python_module_names(p for p in paths if spec_for(p, langs).name == "python")  # type: ignore[union-attr]
    data: dict[str, FileData] = {}
    changed: list[str] = []
    # stat signatures of the files read (``_signature``), valid for this size cap only
    prev_cap, prev_stats = (previous._stats if previous is not None and previous._stats
                            and prev_data else (max_file_bytes, {}))
    if prev_cap != max_file_bytes:
        prev_stats = {}
    stats: dict[str, tuple[int, ...]] = {}
    now = time.time_ns()

    Fresh = tuple[str, LanguageSpec, FileRecord, bytes | None, str | None]

    def read(rel: str) -> tuple[FileData | None, Fresh | None]:
        """The previous data when the file is unchanged (the same stat signature, else the
        same content hash), else what extracting it needs."""
        spec = spec_for(rel, langs)
        assert spec is not None
        module = modules.get(rel)
        old = prev_data.get(rel)
        same = old is not None and old.module == module and old.record.language == spec.name
        sig = _signature(os.path.join(root, rel), now)
        if same and sig is not None and prev_stats.get(rel) == sig:
            stats[rel] = sig
            return old, None
        record, src = _read(root, rel, spec.name, max_file_bytes)
        if sig is not None and record.sha256:  # taken before the read: a later write shows
            stats[rel] = sig
        if same and old is not None and record.sha256 and old.record.sha256 == record.sha256:
            return old, None
        return None, (rel, spec, record, src, module)

    def fresh(item: Fresh) -> FileData:
        rel, spec, record, src, module = item
        if src is None:
            return FileData(record, module)
        if record.status == "ok" and not src.isascii():  # ASCII is valid UTF-8: no decode
            try:
                src.decode("utf-8")
            except UnicodeDecodeError:
                record = FileRecord(rel, spec.name, record.sha256, record.lines,
                                    record.size, "partial", "not valid UTF-8")
        return extract(rel, src, spec, module, record)

    def load(rel: str) -> FileData:  # a cold index: nothing to reuse
        _, item = read(rel)
        assert item is not None
        return fresh(item)

    extract_processes = 1
    with contextlib.ExitStack() as stack:
        if prev_data:
            # incremental: every file is read and hashed here (handing each to a thread
            # costs more than reading it), then the changed ones are extracted, in forked
            # processes or threads when there are many
            got = [read(rel) for rel in paths]
            pending = [item for _, item in got if item is not None]
            workers = _workers(len(pending))
            forked = map_in_processes(fresh, pending, workers) if workers > 1 else None
            if forked is not None:
                made = iter(forked)
                extract_processes = workers
            elif workers > 1 and _in_threads():
                pool = stack.enter_context(ThreadPoolExecutor(workers, "fleet-index"))
                made = iter(pool.map(fresh, pending))
            else:
                made = map(fresh, pending)
            for done, (rel, (old, _)) in enumerate(zip(paths, got, strict=True), 1):
                if old is not None:
                    data[rel] = old
                else:
                    data[rel] = next(made)
                    changed.append(rel)
                if progress is not None:
                    progress(done, len(paths), rel)
            del got, pending
        else:
            workers = _workers(len(paths))

            def store(i: int, fd: FileData) -> None:
                rel = paths[i]
                data[rel] = fd
                changed.append(rel)
                if progress is not None:
                    progress(i + 1, len(paths), rel)

            def load_stat(rel: str) -> tuple[FileData, tuple[int, ...] | None]:
                return load(rel), stats.get(rel)  # a forked child's stats come back with it

            def tick(finished: int, i: int) -> None:
                if progress is not None:
                    progress(finished, len(paths), paths[i])

            loaded = map_in_processes(load_stat, paths, workers, tick) if workers > 1 else None
            if loaded is not None:  # in forked processes, each with a GIL of its own
                extract_processes = workers
                for rel, (fd, sig) in zip(paths, loaded, strict=True):
                    data[rel] = fd
                    changed.append(rel)
                    if sig is not None:
                        stats[rel] = sig
                if progress is not None and paths:
                    progress(len(paths), len(paths), paths[-1])
            elif workers > 1 and _in_threads():  # the C walk parses without the GIL
                map_in_threads(load, paths, workers, store)
            else:
                for i, rel in enumerate(paths):
                    store(i, load(rel))

    forget_shared_locals()
    if len(changed) >= 64:
        release_free_memory()  # the parsers' freed trees, before the resolvers fork
    if phase is not None:
        phase("resolve")
    symbols = {s.id: s for p in sorted(data) for s in data[p].symbols}
    resolver = Resolver(data, symbols,
                        previous._module_table if same_files else None)  # type: ignore[union-attr]
    refs: dict[str, Sequence[Reference]] = {}
    deps: dict[str, frozenset[str]] = {}
    redo = (affected_files(changed, prev_data, data, previous._deps)
            if previous is not None and prev_data else None)
    todo = [rel for rel in data if redo is None or rel in redo]
    # the resolver is Python: the files are shared out among forked processes instead
    workers = workers_for(len(todo), native_threads(),
                          os.environ.get("FLEET_GRAPH_THREADS") is not None)
    resolved = resolve_files(resolver, data, todo, workers)
    for rel in data:
        pair = resolved.get(rel)
        if pair is None:
            refs[rel] = previous._refs.get(rel, [])  # type: ignore[union-attr]
            deps[rel] = previous._deps[rel]  # type: ignore[union-attr]
        else:
            refs[rel], deps[rel] = pair
    del resolved
    table = resolver.modules
    del resolver  # its caches (an entry per distinct reference) are not needed for the graph
    if phase is not None:
        phase("graph")
    if redo is not None:
        result = SymbolGraph(root, data, refs, deps=deps, previous=previous, changed=redo,
                             symbols=symbols)
    else:
        result = SymbolGraph(root, data, refs, deps=deps, symbols=symbols)
    result._module_table = table
    result._stats = (max_file_bytes, stats)
    result.resolve_processes = workers
    result.extract_processes = extract_processes
    result.seconds = time.perf_counter() - started
    return result

