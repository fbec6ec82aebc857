"""Whole-result checks from the twenty-second unseen set (strawberry, cherrypy, psutil, pyglet,
Zope, pygame; 6 Dec 2026): what one side added to a function or a class that the clean result
keeps in a form that no longer does what that side wrote.

- :func:`param_unread`: a parameter one side added to a function and read there, which the
  result's function takes but never reads, or binds anew before any read (strawberry
  ``286bb70337ff``, 13 test clients: theirs replaced the module-level ``schema`` the view was
  given with a ``schema`` parameter; ours rewrote that same use to ``self.schema =
  get_schema(schema_config)``; the merge kept both, so a caller's schema was ignored, and in
  ``channels.py`` the parameter was bound anew before it was read). A body that binds the
  parameter anew before reading it reads the parameter on no side (python-telegram-bot
  ``4de323ae7ff4``: a fixture both sides renamed, shadowed by the test).
- :func:`agreed_lost`: a function both sides changed the same way (equal syntax trees, comments
  aside) that the result holds otherwise (psutil ``2b59a12cc00e``: both sides made one
  ``if ... raise`` an ``if ... pass`` / ``elif ... raise``, one above a comment and one below;
  the merge held the new ``if`` twice).
- :func:`union_doubled`: a ``|`` chain in the result that names one operand twice where no input
  has such a chain (pyglet ``0c996946e61c``: ``float`` made ``None | float`` by ours and
  ``float | None`` by theirs, merged into ``None | float | None``).
- :func:`builtin_base_lost`: a class one side took off a built-in base (``dict``, ``list``,
  ...) while the other side added a read of ``self.<name>`` that only that base provides
  (pyglet ``90e7f097adda``: ``MouseStateHandler(dict)`` made a plain class holding
  ``self.data``; theirs added ``on_deactivate`` calling ``self.clear()``: ``AttributeError``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from fleet.merge import _parsed
from fleet.merge._unbound import flat

__all__ = ["agreed_lost", "builtin_base_lost", "param_unread", "union_doubled"]

_Def = ast.FunctionDef | ast.AsyncFunctionDef
_BUILTIN_BASES = {"dict", "list", "set", "frozenset", "str", "bytes", "tuple", "int", "float"}


def _defs(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function and class, nested ones included, in the scope's
    statements (inside ``if``/``try``/``with`` blocks too)."""
    for stmt in flat(body):
        if isinstance(stmt, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{stmt.name}"
            yield name, stmt
            yield from _defs(stmt.body, f"{name}." if isinstance(stmt, ast.ClassDef)
                             else f"{name}().")


def _functions(tree: ast.Module) -> dict[str, _Def]:
    return {n: d for n, d in _defs(tree.body) if isinstance(d, _Def)}


def _params(node: _Def) -> set[str]:
    a = node.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
    return {arg.arg for arg in every}


def _reads(nodes: list[ast.stmt] | list[ast.expr], name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for stmt in nodes for n in ast.walk(stmt)
    )


def _bound_first(body: list[ast.stmt], name: str) -> bool:
    """Whether the first statement of ``body`` that names ``name`` binds it from a value that
    does not read it (``schema = get_schema(config)``)."""
    for stmt in body:
        if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)):
            continue
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            return not _reads([stmt.value], name) and any(
                isinstance(t, ast.Name) and t.id == name for t in targets)
        return False
    return False


def _uses(body: list[ast.stmt], name: str) -> bool:
    """Whether ``body`` reads the parameter ``name``: reads it, not after binding it anew."""
    return _reads(body, name) and not _bound_first(body, name)


def param_unread(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_functions(tree) for tree in trees)
    for qualname, result in merged.items():
        before = base.get(qualname)
        if before is None:
            continue
        taken = _params(result)
        for side in (ours, theirs):
            own = side.get(qualname)
            if own is None:
                continue
            for name in sorted((_params(own) - _params(before)) & taken):
                if not _uses(own.body, name):
                    continue  # the side's own body binds it anew first (ptb ``4de323ae7ff4``)
                if not _uses(result.body, name):
                    return (f"{qualname} takes {name}, which one side added and read, but "
                            "never reads it")
    return None


def _lines(lines: list[str], node: ast.AST) -> list[str]:
    return lines[node.lineno - 1 : node.end_lineno]  # type: ignore[attr-defined]


def agreed_lost(texts: list[str], trees: list[ast.Module]) -> str | None:
    """``texts`` and ``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_functions(tree) for tree in trees)
    lines = [text.splitlines() for text in texts[:3]]
    for qualname, result in merged.items():
        before, one, two = base.get(qualname), ours.get(qualname), theirs.get(qualname)
        if before is None or one is None or two is None:
            continue
        old = _lines(lines[0], before)
        if old == _lines(lines[1], one) or old == _lines(lines[2], two):
            continue  # lines both sides changed are the rare case: only then the trees
        agreed = ast.dump(one)
        if agreed != ast.dump(two) or agreed == ast.dump(before):
            continue
        if ast.dump(result) != agreed:
            return f"{qualname} was changed the same way by both sides, and the result differs"
    return None


def _operands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _operands(node.left) + _operands(node.right)
    return [node]


def _doubled_chains(tree: ast.Module) -> int:
    inner: set[int] = set()
    count = 0
    for node in _parsed.of(_parsed.nodes(tree), ast.BinOp):
        if not isinstance(node.op, ast.BitOr) or id(node) in inner:
            continue
        for side in (node.left, node.right):
            if isinstance(side, ast.BinOp) and isinstance(side.op, ast.BitOr):
                inner.add(id(side))
        dumps = [ast.dump(operand) for operand in _operands(node)]
        count += len(dumps) != len(set(dumps))
    return count


def union_doubled(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    if _doubled_chains(trees[3]) > max(_doubled_chains(tree) for tree in trees[:3]):
        return "a | chain names one operand twice, which no input does"
    return None


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n: d for n, d in _defs(tree.body) if isinstance(d, ast.ClassDef)}


def _bases(node: ast.ClassDef) -> set[str]:
    return {b.id for b in node.bases if isinstance(b, ast.Name)}


def _self_reads(node: ast.ClassDef) -> set[str]:
    return {
        n.attr for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        and n.value.id == "self" and isinstance(n.ctx, ast.Load)
    }


def _own_names(node: ast.ClassDef) -> set[str]:
    names = {s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
    names |= {
        n.attr for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
    }
    return names | {
        t.id for s in node.body if isinstance(s, ast.Assign | ast.AnnAssign)
        for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
        if isinstance(t, ast.Name)
    }


def builtin_base_lost(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_classes(tree) for tree in trees)
    for qualname, result in merged.items():
        versions = [base.get(qualname), ours.get(qualname), theirs.get(qualname)]
        if any(v is None for v in versions):
            continue
        before, one, two = versions
        assert before is not None and one is not None and two is not None
        for side, other in ((one, two), (two, one)):
            dropped = (_bases(before) - _bases(side)) & _BUILTIN_BASES & _bases(other)
            if not dropped or dropped & _bases(result):
                continue
            provided = set().union(*(dir(getattr(builtins, b)) for b in dropped))
            own = set().union(*(_own_names(v) for v in (before, side, other)))
            added = (_self_reads(other) - _self_reads(before)) & provided
            lost = sorted((added & _self_reads(result)) - own)
            if lost:
                return (f"{qualname} reads self.{lost[0]}, which only the base "
                        f"{sorted(dropped)[0]} one side removed provides")
    return None
