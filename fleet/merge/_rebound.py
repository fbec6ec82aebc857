"""Whole-result check, from the fortieth unseen set (7 Dec 2026): a statement one side added
that changes a value the next statement reads, where the other side rewrote that next
statement. Each side's edit is right alone; together they disagree on what the statement is
given, and git's line merge conflicts there (the two edits touch).

- bandit ``9f99d63b4d6e``, ``bandit/core/manager.py``: theirs added
  ``new_files_list = ["<stdin>" if x == "-" else x for x in new_files_list]`` above
  ``self._parse_file('<stdin>', sys.stdin, new_files_list)``, whose first argument ours made
  ``fname`` (``'-'`` there): merged, the call names a file its list no longer holds, and its
  error path's ``new_files_list.remove(fname)`` raises;
- ansible-lint ``c5927c78c9d6``, ``src/ansiblelint/rules/__init__.py``: theirs added
  ``if self.needs_raw_task: task["__raw_task__"] = raw_task`` above
  ``result = self.matchtask(task, file=file)``, which ours turned into an ``if
  self.needs_raw_task:`` calling ``matchrawtask`` instead: two designs of one feature, stacked.

In a function of all four versions, two statements next to each other in one block of the
result, the first one side inserted (in its block, against base's, an insertion and not a
rewrite of a statement base has) and the second only the other side has, where the first
writes a name (or an attribute or item of it) that the second reads: the file conflicts.
Two neighbours each side rewrote (astroid ``b63c90162e44``: ``ast = parse(code)`` by theirs,
the next line's ``infered`` renamed by ours) are each side's own edit, as git would merge
them had a line stood between: they merge.
"""

from __future__ import annotations

import ast
import io
from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher
from itertools import pairwise

from fleet.merge._parsed import dotted

__all__ = ["rebound_before_edit"]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(body: list[ast.stmt], scope: str = "") -> Iterator[tuple[str, _Function]]:
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{scope}{stmt.name}", stmt
            yield from _functions(stmt.body, f"{scope}{stmt.name}.")
        elif isinstance(stmt, ast.ClassDef):
            yield from _functions(stmt.body, f"{scope}{stmt.name}.")


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """``body`` and every block of statements inside it (not inside the definitions it holds)."""
    yield body
    for stmt in body:
        if isinstance(stmt, _DEFS):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _blocks(inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _blocks(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from _blocks(case.body)


def _dumps(function: _Function) -> set[str]:
    return {ast.dump(stmt) for block in _blocks(function.body) for stmt in block}


def _inserted(statement: str, side: _Function, base: _Function) -> bool:
    """Is ``statement`` (a dump) one ``side`` inserted into its block, where base's most alike
    block has no statement in its place?"""
    olds = [[ast.dump(stmt) for stmt in block] for block in _blocks(base.body)]
    for block in _blocks(side.body):
        news = [ast.dump(stmt) for stmt in block]
        if statement not in news:
            continue
        at = news.index(statement)
        old = max(olds, key=lambda o: len(set(o) & set(news)))
        matcher = SequenceMatcher(None, old, news, autojunk=False)
        return any(tag == "insert" and j1 <= at < j2
                   for tag, _, _, j1, j2 in matcher.get_opcodes())
    return False


def _named(stmt: ast.stmt, ctx: type[ast.expr_context], skip: set[int]) -> set[str]:
    """The names and attribute chains (``a``, ``a.b``) of ``stmt`` in context ``ctx``, but for
    the nodes in ``skip`` (by ``id``)."""
    out: set[str] = set()
    for node in ast.walk(stmt):
        if id(node) in skip or not isinstance(getattr(node, "ctx", None), ctx):
            continue
        name = node.id if isinstance(node, ast.Name) else None
        if isinstance(node, ast.Attribute):
            name = dotted(node)
        if name is not None:
            out.add(name)
    return out


def _written(stmt: ast.stmt) -> set[str]:
    """The names (``a``, ``a.b``) ``stmt`` binds, and those whose attributes or items it sets
    (not a comprehension's own names, nor attributes of ``self`` or ``cls``)."""
    own = {id(name) for node in ast.walk(stmt) if isinstance(node, ast.comprehension)
           for name in ast.walk(node.target)}
    out = {name for name in _named(stmt, ast.Store, own)
           if not name.startswith(("self.", "cls."))}
    for node in ast.walk(stmt):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            name = dotted(node.value)
            if name is not None and name not in ("self", "cls"):
                out.add(name)
    return out


def _read(stmt: ast.stmt) -> set[str]:
    """The names (``a``, ``a.b``) ``stmt`` reads; not those it only stores into (``a["k"] = v``
    reads ``a`` to store, which the statement above setting ``a["j"]`` does not feed), nor
    a definition's (its body runs later, if ever: responses ``e3ac0f2631e1``, theirs'
    loop over ``params`` above the nested ``def match`` whose signature ours annotated)."""
    if isinstance(stmt, _DEFS):
        return set()
    into: set[int] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Subscript | ast.Attribute) and not isinstance(node.ctx, ast.Load):
            root = node.value
            while isinstance(root, ast.Subscript | ast.Attribute):
                root = root.value
            into.add(id(root))
    return _named(stmt, ast.Load, into)


def _text(lines: list[str], function: _Function) -> str:
    start = min([function.lineno, *(d.lineno for d in function.decorator_list)])
    return "".join(lines[start - 1 : function.end_lineno])


def rebound_before_edit(trees: list[ast.Module], texts: Sequence[str]) -> str | None:
    """``trees``: base, ours, theirs, result, parsed from ``texts`` (see the module
    docstring)."""
    base, ours, theirs = (dict(_functions(tree.body)) for tree in trees[:3])
    # lines as the parser counts them (``str.splitlines`` also splits at a form feed)
    lines = [io.StringIO(text, newline="").readlines() for text in texts[:3]]
    for name, function in _functions(trees[3].body):
        if name not in base or name not in ours or name not in theirs:
            continue
        was = _text(lines[0], base[name])
        if _text(lines[1], ours[name]) == was or _text(lines[2], theirs[name]) == was:
            continue  # one side left the function as it was: nothing of the two meets in it
        before, left, right = (_dumps(f[name]) for f in (base, ours, theirs))
        only = {"ours": left - before - right, "theirs": right - before - left}
        for block in _blocks(function.body):
            for first, second in pairwise(block):
                one, other = ast.dump(first), ast.dump(second)
                sides = [a for a, b in (("ours", "theirs"), ("theirs", "ours"))
                         if one in only[a] and other in only[b]]
                if not sides:
                    continue
                shared = _written(first) & _read(second)
                inserter = ours[name] if sides[0] == "ours" else theirs[name]
                if shared and _inserted(one, inserter, base[name]):
                    return (f"in {name}, a statement one side added sets {sorted(shared)[0]}, "
                            "which the next statement, rewritten by the other side, reads")
    return None
