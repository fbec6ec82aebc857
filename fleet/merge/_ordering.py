"""A whole-result check for statements placed where a name they need at import time is not yet
bound: one side moved a block of definitions further down the module, the other side added a
definition that uses one of them right where the block used to be. Each input imports fine; the
clean result raises ``NameError`` when the module is imported (mne-python ``e6f9faf42f47``,
``mne/viz/ui_events.py``: ours moved the event classes below the functions, theirs appended
``class ChannelsSelect(UIEvent)`` after the last of them in the old place; the result defined
``ChannelsSelect`` 300 lines above ``UIEvent``). The file conflicts instead.

What is read at import time, and checked: the bases, keywords and decorators of a top-level
class; the decorators and default values of a top-level function; the values of top-level
assignments and expression statements (not inside a lambda, a comprehension or a function
body, which run later). A name counts as missing when no statement before the reading one binds
it (a binding anywhere inside an earlier top-level ``if``/``try``/``with``/``for`` counts) and a
later top-level statement does; a star import, ``global`` or a module ``__getattr__`` anywhere
stops the check (names may come from elsewhere). Only a missing name that no input misses is
reported: a module that already relied on something else binding it first stays as it was.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from fleet.merge import _parsed

__all__ = ["bound_at_top", "used_before_bound"]

_BUILTINS = frozenset(dir(builtins))
_LATER = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _loads(node: ast.AST) -> Iterator[str]:
    """Names ``node`` reads when it runs, not looking into lambdas or comprehensions."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            yield current.id
        elif not isinstance(current, _LATER):
            stack.extend(ast.iter_child_nodes(current))


def _eager(stmt: ast.stmt) -> list[ast.AST]:
    """The parts of a top-level statement that run when the module is imported (see above)."""
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.bases, *(k.value for k in stmt.keywords), *stmt.decorator_list]
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        args = stmt.args
        return [*stmt.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d)]
    if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr):
        return [stmt.value] if stmt.value is not None else []
    return []


def _bound(stmt: ast.stmt) -> set[str]:
    """Every name a top-level statement binds in the module, its nested blocks included (not
    inside functions, classes, lambdas or comprehensions)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    names: set[str] = set()
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
            stack.extend(ast.iter_child_nodes(node))
        elif not isinstance(node, _LATER):
            stack.extend(ast.iter_child_nodes(node))
    return names


def bound_at_top(tree: ast.Module) -> set[str]:
    """Every name the module binds at its top level (see :func:`_bound`)."""
    return set().union(*(_bound(stmt) for stmt in tree.body))


def _open(tree: ast.Module) -> bool:
    """Whether names may be bound out of sight: a star import, ``global``, a module
    ``__getattr__``."""
    found = _parsed.nodes(tree)
    return (
        any(alias.name == "*" for alias in _parsed.of(found, ast.alias))
        or bool(_parsed.of(found, ast.Global))
        or any(f.name == "__getattr__" for f in tree.body if isinstance(f, ast.FunctionDef))
    )


def _missing(tree: ast.Module) -> set[str]:
    """Names a top-level statement reads at import time before any statement binds them while a
    later one does."""
    if _open(tree):
        return set()
    bindings = [_bound(stmt) for stmt in tree.body]
    later: set[str] = set().union(*bindings) if bindings else set()
    so_far: set[str] = set()
    missing: set[str] = set()
    for stmt, binds in zip(tree.body, bindings, strict=True):
        for part in _eager(stmt):
            missing.update(name for name in _loads(part) if name not in so_far and name in later)
        so_far |= binds
    return missing - _BUILTINS


def used_before_bound(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    missing = _missing(trees[3])
    if not missing:
        return None
    missing -= set().union(*(_missing(tree) for tree in trees[:3]))
    if not missing:
        return None
    return f"{sorted(missing)[0]} is read at import time above the statement that binds it"
