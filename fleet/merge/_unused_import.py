"""An import one side moved into a function while the other side removed every use of its name:
the merge keeps the moved import, which nothing reads any more (scikit-image ``579752d055a0``,
``src/skimage2/feature/_peaks.py``: ours replaced ``ensure_spacing`` by a local
``_ensure_spacing`` and deleted its import; theirs moved ``from skimage._shared.coord import
ensure_spacing`` into the function that called it; the clean merge kept that import, unused, of a
module ours no longer needs; the humans dropped it).

The file conflicts when an import inside a function of the result binds a name the result reads
nowhere, while one side has such an import inside a function and reads the name, the other side
reads it nowhere, and base read it: one side's removal met the other's move.

The other way round too (Zope ``4a96a238ac1a``, ``src/OFS/misc_.py``, the twenty-second unseen
set): theirs moved ``import OFS``, ``import webdav``, ``import HelpSys`` out of a class body to
module level; ours deleted every read of them (and the ``HelpSys`` package); the clean merge kept
them at module level, read by nothing, ``import HelpSys`` an ``ImportError``. The file conflicts
when a module-level import of the result binds a name the result reads nowhere, which one side
imports at module level and reads while base did not import it there, and the other side
neither imports it there nor reads it, base having read it.
"""

from __future__ import annotations

import ast

from fleet.merge import _parsed
from fleet.merge._unbound import flat

__all__ = ["import_left_unused"]


def _reads(tree: ast.Module) -> set[str]:
    return {node.id for node in _parsed.of(_parsed.nodes(tree), ast.Name)
            if isinstance(node.ctx, ast.Load)}


def _local_imports(tree: ast.Module) -> set[str]:
    """The names bound by imports inside functions (at any depth)."""
    found: set[str] = set()
    functions = [*_parsed.of(_parsed.nodes(tree), ast.FunctionDef),
                 *_parsed.of(_parsed.nodes(tree), ast.AsyncFunctionDef)]
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.update(
                    alias.asname or alias.name.split(".")[0]
                    for alias in node.names
                    if alias.name != "*"
                )
    return found


def _module_imports(tree: ast.Module) -> set[str]:
    """The names bound by the module's own imports (inside ``if``/``try``/``with`` too)."""
    return {
        alias.asname or alias.name.split(".")[0]
        for stmt in flat(tree.body) if isinstance(stmt, ast.Import | ast.ImportFrom)
        for alias in stmt.names if alias.name != "*"
    }


def import_left_unused(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    result = trees[3]
    read = _reads(result)
    left = _local_imports(result) - read
    top = _module_imports(result) - read
    if not left and not top:
        return None
    reads = [_reads(tree) for tree in trees[:3]]
    for side, other in ((1, 2), (2, 1)):
        moved = _local_imports(trees[side]) & reads[side]
        for name in sorted(left & moved & reads[0]):
            if name not in reads[other]:
                return f"an import of {name} one side moved into a function is left unused"
        if not top:
            continue
        out = (_module_imports(trees[side]) & reads[side]) - _module_imports(trees[0])
        for name in sorted(top & out & reads[0] - reads[other] - _module_imports(trees[other])):
            return f"an import of {name} one side moved to module level is left unused"
    return None
