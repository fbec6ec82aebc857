"""Module names: Python files' dotted module names and the table that maps a module key to
module symbol ids (Python dotted names and path suffixes, JS/TS paths, Go directories)."""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Iterable, Mapping

from fleet.graph._model import MODULE, FileData

__all__ = ["module_table", "python_module_names"]

_SRC_DIRS = ("src", "lib", "python")
_STDLIB = frozenset(sys.stdlib_module_names)


def python_module_names(paths: Iterable[str]) -> dict[str, str]:
    """Dotted module name of each Python file: the chain of package directories (those with an
    ``__init__.py``) above it; files in a ``src/``-style directory or outside any package are
    top-level modules."""
    paths = sorted(paths)
    init_dirs = {posixpath.dirname(p) for p in paths if posixpath.basename(p) == "__init__.py"}
    out: dict[str, str] = {}
    for path in paths:
        directory, base = posixpath.split(path)
        stem = base.rsplit(".", 1)[0]
        parts = [] if stem == "__init__" else [stem]
        while directory and directory in init_dirs:
            directory, name = posixpath.split(directory)
            parts.append(name)
        parts.reverse()
        out[path] = ".".join(parts) if parts else posixpath.basename(posixpath.dirname(path))
    return out


def module_table(files: Mapping[str, FileData]) -> dict[str, list[str]]:
    """Module key -> module symbol ids. Python: dotted names first, then (when unambiguous, and
    not starting with a standard library module's name) dotted suffixes of the file path, for
    namespace packages and scripts run from elsewhere.
    JS/TS: the path without extension (and a directory for its index file). Go: the directory."""
    table: dict[str, list[str]] = {}
    aliases: dict[str, set[str]] = {}
    for path in sorted(files):
        fd = files[path]
        lang = fd.record.language
        mid = f"{path}::{MODULE}"
        if lang == "python" and fd.module:
            table.setdefault(fd.module, []).append(mid)
            stem = path.rsplit(".", 1)[0]
            parts = stem.split("/")
            if parts[-1] == "__init__":
                parts.pop()
            while parts and parts[0] in _SRC_DIRS:
                parts.pop(0)
            for i in range(len(parts)):
                aliases.setdefault(".".join(parts[i:]), set()).add(mid)
        elif lang in ("javascript", "typescript"):
            stem = path.rsplit(".", 1)[0]
            table.setdefault(stem, []).append(mid)
            if posixpath.basename(stem) == "index":
                table.setdefault(posixpath.dirname(stem), []).append(mid)
        elif lang == "go":
            table.setdefault(posixpath.dirname(path) or ".", []).append(mid)
    for name, ids in aliases.items():
        # a suffix that starts with a standard module's name (`logging` for
        # sphinx/util/logging.py, `collections` for django/contrib/gis/geos/collections.py) is
        # that module in an absolute import: ambiguous at best, so no alias
        if name not in table and len(ids) == 1 and name.partition(".")[0] not in _STDLIB:
            table[name] = sorted(ids)
    return table
