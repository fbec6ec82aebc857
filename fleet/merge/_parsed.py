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
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from fleet import pyast

__all__ = ["depth_of", "parse", "parsing_once"]

_LOCAL = threading.local()


@contextmanager
def parsing_once() -> Iterator[None]:
    """Within it (per thread), :func:`parse` keeps what it parsed; forgotten when it ends."""
    outer = getattr(_LOCAL, "trees", None)
    if outer is None:
        _LOCAL.trees, _LOCAL.depths = {}, {}
    try:
        yield
    finally:
        if outer is None:
            _LOCAL.trees = _LOCAL.depths = None


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


def depth_of(text: str, tree: ast.Module, limit: int) -> int:
    """``_bounds.depth(tree, limit)`` of ``text``'s tree, computed once per text and limit
    inside :func:`parsing_once`."""
    from fleet.merge._bounds import depth

    depths: dict[tuple[str, int], int] | None = getattr(_LOCAL, "depths", None)
    if depths is None:
        return depth(tree, limit)
    found = depths.get((text, limit))
    if found is None:
        found = depths[(text, limit)] = depth(tree, limit)
    return found
