"""Each text parsed by ``ast`` once while one file is merged.

The structural stage and the whole-file stage after it parse the same texts several times: the
three versions to set aside what nobody changed (``_reduce``), again for the bounds
(``_bounds``) and for the whole-result checks (``_checks``), once more when the held-lines stage
(``_merge3.held_file``) checks its result. On real merge history that was a fifth of the
structural stage's time. Inside :func:`parsing_once` (``after_line_stage`` holds it for one
file) a text's tree and nesting depth are kept and handed out again; nothing that reads them
changes a tree. Outside it every call parses, as before. Only trees are kept: a text that does
not parse raises again each time.
"""

from __future__ import annotations

import ast
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar, cast

from fleet import pyast

__all__ = ["Nodes", "compiles", "depth_of", "dotted", "nodes", "of", "parse", "parsing_once"]

Nodes = dict[type, list[ast.AST]]
T = TypeVar("T", bound=ast.AST)

_LOCAL = threading.local()


@contextmanager
def parsing_once() -> Iterator[None]:
    """Within it (per thread), :func:`parse` keeps what it parsed; forgotten when it ends."""
    outer = getattr(_LOCAL, "trees", None)
    if outer is None:
        _LOCAL.trees, _LOCAL.depths, _LOCAL.nodes = {}, {}, {}
    try:
        yield
    finally:
        if outer is None:
            _LOCAL.trees = _LOCAL.depths = _LOCAL.nodes = None


def parse(text: str) -> ast.Module:
    """``pyast.parse(text)``, the same tree again for the same text inside :func:`parsing_once`
    (callers only read it)."""
    trees: dict[str, ast.Module] | None = getattr(_LOCAL, "trees", None)
    if trees is None:
        return pyast.parse(text)
    tree = trees.get(text)
    if tree is None:
        tree = trees[text] = pyast.parse(text)
    return tree


def compiles(text: str) -> bool:
    """Whether ``text`` compiles, not only parses: Python's compiler run over its tree (kept by
    :func:`parse`) finds what its parser lets through, a parameter named twice above all (nilearn
    ``ad3f952f0404``: both sides added ``n_voxels=4`` to one signature at two places, and the
    merge kept both: ``SyntaxError: duplicate argument``), a keyword passed twice, ``nonlocal``
    or ``return`` where they are not allowed, a ``from __future__`` import below another
    statement. About 2 ms for a 22 KB module. The compiler's warnings (``is not`` with a
    literal, an invalid escape) are the code's own, not the merge's: silenced, never printed
    into a merge's output nor turned into errors by ``-W error``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(parse(text), "<merged>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return False
    return True


def depth_of(text: str, tree: ast.Module, limit: int) -> int:
    """``_bounds.depth(tree, limit)`` of ``text``'s tree, computed once per text and limit
    inside :func:`parsing_once`, by the same walk that :func:`nodes` keeps."""
    from fleet.merge._bounds import depth

    depths: dict[tuple[str, int], int] | None = getattr(_LOCAL, "depths", None)
    if depths is None:
        return depth(tree, limit)
    found = depths.get((text, limit))
    if found is None:
        found, by_type = _walk(tree, limit)
        depths[(text, limit)] = found
        if by_type is not None:
            _LOCAL.nodes[id(tree)] = (tree, by_type)
    return found


def _walk(tree: ast.AST, limit: int) -> tuple[int, Nodes | None]:
    """(``_bounds.depth(tree, limit)``, every node of ``tree`` by type, None past ``limit``).
    Level by level, children in field order: each list in ``ast.walk``'s order."""
    by_type: Nodes = {}
    node_type = ast.AST
    level = 0
    current: list[ast.AST] = [tree]
    while current:
        level += 1
        if level > limit:
            return level, None
        below: list[ast.AST] = []
        add = below.append
        for node in current:
            kind = type(node)
            bucket = by_type.get(kind)
            if bucket is None:
                by_type[kind] = [node]
            else:
                bucket.append(node)
            for name in node._fields:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    for item in value:
                        if isinstance(item, node_type):
                            add(item)
                elif isinstance(value, node_type):
                    add(value)
        current = below
    return level, by_type


def nodes(tree: ast.AST) -> Nodes:
    """Every node of ``tree`` (itself included) by its type, each list in ``ast.walk``'s order;
    a module's computed once inside :func:`parsing_once` (or already by :func:`depth_of`). The
    whole-result checks look for a few kinds of node in the same four trees: one walk instead of
    one per check and kind."""
    cache: dict[int, tuple[ast.AST, Nodes]] | None = getattr(_LOCAL, "nodes", None)
    keep = cache is not None and isinstance(tree, ast.Module)
    if keep:
        assert cache is not None
        found = cache.get(id(tree))
        if found is not None and found[0] is tree:
            return found[1]
    by_type = _walk(tree, sys.maxsize)[1]
    assert by_type is not None
    if keep:
        assert cache is not None
        cache[id(tree)] = (tree, by_type)
    return by_type


def of(found: Nodes, kind: type[T]) -> list[T]:
    """The nodes of type ``kind`` among ``found`` (:func:`nodes`), in ``ast.walk``'s order."""
    return cast(list[T], found.get(kind, []))


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a name or a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
