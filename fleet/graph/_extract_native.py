"""Python files through the C extractor (``fleet.graph._native``, built from fleet/graph/_c).

``extract_python`` returns the same ``FileData`` as the query path in ``_extract`` (the query
file stays the specification; tests compare both paths file by file) for about half the CPU,
parse included: the C walk recognises the query's patterns, sorts, de-duplicates and scopes the
references, builds the ``Symbol`` tuples itself and returns the references as ``RawRefs``
columns (with the GIL released for the parse and the walk when threaded). This module adds the
module symbol, the import references and the import table.

``available()`` is False when the extension was not built (no C compiler at install time) or
``FLEET_GRAPH_NATIVE=0`` is set; ``index`` then takes the query path for Python too.
"""

from __future__ import annotations

import array
import hashlib
import os
from functools import cache
from sys import intern
from types import ModuleType

from fleet.graph._imports import _absolute
from fleet.graph._model import MODULE, FileData, FileRecord, Symbol
from fleet.graph._procs import forkable
from fleet.graph._refs import KIND_CODE, RawRefs
from fleet.graph._shared import count_lines, pytest_file, scope_at

__all__ = ["Pos", "available", "extract_python", "native_module", "threaded", "threads"]

# (start, end, row, col) of an import's node
Pos = tuple[int, int, int, int]
_LOADED_THREADED = [False]  # the mode the extension was initialised in


@cache
def _module() -> ModuleType | None:
    if os.environ.get("FLEET_GRAPH_NATIVE", "1") == "0":
        return None
    try:
        from fleet.graph import _native
    except ImportError:
        return None
    import tree_sitter_python

    # Threads share the parses only when the extension releases the GIL, which needs malloc
    # for tree-sitter's allocations; forked processes (``_procs``) need neither, so a process
    # that can fork keeps pymalloc (~15% faster per parse) and extracts in processes.
    _LOADED_THREADED[0] = threads() > 1 and not forkable()
    try:
        _native.init(tree_sitter_python.language(), _LOADED_THREADED[0])
    except (ValueError, RuntimeError):  # a grammar this build does not know: the query path
        return None
    return _native


def threads() -> int:
    """Extraction processes or threads for ``index``: ``FLEET_GRAPH_THREADS``, else one per
    usable core (at most 4). Forked processes where the process can fork (``_procs``: no other
    thread alive when the extension loads); else threads, the extension then loaded to parse
    without the GIL, its runtime allocating with malloc (~15% slower per parse than pymalloc).
    The mode is decided once per process, when the extension loads."""
    wanted = os.environ.get("FLEET_GRAPH_THREADS")
    if wanted is not None and wanted.strip().isdigit():
        return max(1, int(wanted))
    return min(4, len(os.sched_getaffinity(0)))


def threaded() -> bool:
    """Whether the loaded extension parses without the GIL (``threads() > 1`` at load)."""
    return _module() is not None and _LOADED_THREADED[0]


def native_module() -> ModuleType | None:
    """The loaded extension (its ``fanout`` serves the resolver too), or None."""
    return _module()


def available() -> bool:
    """Whether Python files take the C path."""
    return _module() is not None


def extract_python(path: str, src: bytes, module: str | None, record: FileRecord) -> FileData:
    """``_extract.extract`` for one Python file, through the C walk. Never raises on bad syntax
    (tree-sitter recovers; such a file is marked ``partial``)."""
    native = _module()
    assert native is not None, "extract_python needs the built extension (see available())"
    module_id = f"{path}::{MODULE}"
    has_error, symbols, spans, fixture_params, columns, params, local_types, imports = (
        native.extract(src, path, module_id, Symbol, pytest_file(path)))
    ref_scopes, ref_names, ref_kinds, *numbers = columns
    # the file's digest, when the caller computed it over these bytes, is the module's hash
    whole = record.sha256 if len(record.sha256) == 64 and record.size == len(src) else ""
    symbols.insert(0, Symbol(
        module_id, path, MODULE, module or path, "module", "python", 0, len(src), 1,
        max(1, record.lines if whole else count_lines(src)), 0, 0,
        (whole or hashlib.sha256(src).hexdigest())[:16], None))

    package = ""
    if module:
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    table: dict[str, str] = {}
    stars: list[str] = []
    scoped: dict[str, dict[str, str]] = {}
    # the import references follow the walk's, one column entry each
    lines, cols, starts, ends = (_u32(b) for b in numbers)
    bindings = _bindings(imports, package)
    for local, target, (start, end, row, col) in bindings:
        target = intern(target)  # as the C walk's reference names: one object per name
        scope = scope_at(spans, module_id, start)
        ref_scopes.append(scope)
        lines.append(row + 1)
        cols.append(col)
        starts.append(start)
        ends.append(end)
        if local is None:
            if target.endswith(".*"):
                stars.append(target[:-2])
            ref_names.append(target.removesuffix(".*"))
            continue
        ref_names.append(target)
        # An import binds in the innermost definition around it; module-level ones form the
        # file's import table. First binding wins.
        if scope == module_id:
            table.setdefault(local, target)
        else:
            scoped.setdefault(scope, {}).setdefault(local, target)

    if has_error and record.status == "ok":
        record = FileRecord(record.path, record.language, record.sha256, record.lines,
                            record.size, "partial", "syntax errors: kept what parsed")
    refs = RawRefs.packed(ref_scopes, ref_names, ref_kinds + _IMPORT * len(bindings), lines,
                          cols, starts, ends)
    return FileData(record, module, symbols, refs, table, stars, params, local_types,
                    fixture_params, scoped)


_IMPORT = bytes([KIND_CODE["import"]])


def _u32(raw: bytes) -> array.array:
    """A column of the C walk (native uint32 bytes) as an ``array('I')``."""
    out = array.array("I")
    out.frombytes(raw)
    return out


def _bindings(imports: list[tuple], package: str) -> list[tuple[str | None, str, Pos]]:
    """``_imports.python_imports`` over the C walk's import descriptions."""
    out: list[tuple[str | None, str, Pos]] = []
    for desc in imports:
        if desc[0] == "import":
            for how, text, alias, pos in desc[1]:
                if how == "d":
                    head = text.split(".", 1)[0]
                    out.append((head, head, pos))
                    if text != head:  # `import a.b` also makes `a.b` reachable
                        out.append((None, text, pos))
                else:
                    out.append((alias, text, pos))
            continue
        _, dots, text, names, stars = desc
        base = text if dots < 0 else _absolute(dots, text, package)
        for how, dotted, alias, pos in names:
            target = f"{base}.{dotted}" if base else dotted
            out.append((dotted.rsplit(".", 1)[-1] if how == "d" else alias, target, pos))
        for pos in stars:
            out.append((None, base + ".*", pos))
    return out
