"""Whole-result checks, from the eighteenth unseen set (6 Dec 2026): one thing both sides wrote
at one place, kept twice where no input has it twice.

- two docstrings (:func:`docstring_twice`): both sides gave one function a docstring, each its
  own text, and the merge kept both, the second a dead string statement (optuna
  ``85554f71a25a``, ``PedAnovaImportanceEvaluator.evaluate``: ours' docstring live, theirs'
  below it, while the code kept theirs' removal of the check ours' text documents);
- one value bound under two names (:func:`assigned_under_two_names`): in one scope, a name only
  ours binds and one only theirs binds, to the same value of 8 nodes or more (uvicorn
  ``f4871bdafa75``: ``ONLY_WSPROTO`` and ``ONLY_WS_PROTOCOL``, both
  ``[p for p in [WSProtocol] if p is not None]``, added after one constant; the humans kept
  theirs').

- two primary keys in one model (:func:`primary_keys_doubled`): each side gave one class a
  ``...Field(primary_key=True)`` under its own name and the merge kept both, which Django
  refuses (django-polymorphic ``a3c9bcb14a8b``, thirty-ninth set: ``id2 =
  models.AutoField(primary_key=True)`` by ours, ``base_3_id = ...`` by theirs, in
  ``MROBase3``; the humans kept theirs'). Below :data:`LEAST_VALUE_NODES`, so the check above
  could not tell. A ``Column(..., primary_key=True)`` (SQLAlchemy) may be one of several: only
  a call of a ``...Field`` counts.
- one entry of a list of names added under two spellings (:func:`entry_spelled_twice`): in a
  list, tuple or set of strings bound to one name, ours added one string and theirs another
  that is the first with a letter or two more, or the same but for case and ``_``/``-``, and
  the merge kept both (django-celery-beat ``70b424beb7b0``, fortieth set:
  ``PeriodicTaskAdmin.list_display`` got ``'schedule'`` from ours and ``'scheduler'`` from
  theirs, two columns showing one schedule; the humans kept theirs').
Which one is meant is unknown, so the file conflicts.
"""

from __future__ import annotations

import ast

from fleet.merge import _parsed
from fleet.merge._near_twin import class_scopes, string_statement

__all__ = [
    "assigned_under_two_names", "docstring_twice", "entry_spelled_twice", "primary_keys_doubled",
]

_BODIES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
LEAST_VALUE_NODES = 8  # below it (``0``, ``[]``, ``None``), equal values are a coincidence


def _two_strings(tree: ast.Module) -> int:
    """How many bodies (the module's, each class's and function's) open with two strings."""
    found = _parsed.nodes(tree)
    count = 0
    for kind in _BODIES:
        for node in found.get(kind, ()):
            body: list[ast.stmt] = getattr(node, "body", [])
            count += len(body) >= 2 and string_statement(body[0]) and string_statement(body[1])
    return count


def docstring_twice(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result."""
    if _two_strings(trees[3]) > max(_two_strings(tree) for tree in trees[:3]):
        return "both sides' docstrings of one definition kept one after the other"
    return None


def _assigned(tree: ast.Module) -> dict[tuple[str, str], str]:
    """Each single-name assignment of the module's and its classes' bodies, by (scope, name):
    its value's dump (names bound more than once in a scope are left out)."""
    out: dict[tuple[str, str], str] = {}
    twice: set[tuple[str, str]] = set()
    for scope, body in class_scopes(tree.body):
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            else:
                continue
            if not isinstance(target, ast.Name):
                continue
            key = (scope, target.id)
            if key in out:
                twice.add(key)
            if sum(1 for _ in ast.walk(value)) >= LEAST_VALUE_NODES:
                out[key] = ast.dump(value)
    return {key: value for key, value in out.items() if key not in twice}


def assigned_under_two_names(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result."""
    base, ours, theirs, merged = (_assigned(tree) for tree in trees)
    values: dict[tuple[str, str], str] = {}
    for (scope, name), value in ours.items():
        if (scope, name) not in base and (scope, name) not in theirs and (scope, name) in merged:
            values.setdefault((scope, value), name)
    for (scope, name), value in theirs.items():
        if (scope, name) in base or (scope, name) in ours or (scope, name) not in merged:
            continue
        twin = values.get((scope, value))
        if twin is not None and merged.get((scope, twin)) == merged[(scope, name)]:
            return f"both sides bound one value under two names: {scope}{twin} and {name}"
    return None


def _primary_keys(tree: ast.Module) -> dict[str, int]:
    """Each class (by scope) -> how many of its body's assignments call a ``...Field`` with
    ``primary_key=True``."""
    out: dict[str, int] = {}
    for scope, body in class_scopes(tree.body):
        for stmt in body:
            value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
            if not isinstance(value, ast.Call):
                continue
            func = value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.endswith("Field") and any(
                k.arg == "primary_key" and isinstance(k.value, ast.Constant)
                and k.value.value is True for k in value.keywords
            ):
                out[scope] = out.get(scope, 0) + 1
    return out


def primary_keys_doubled(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result."""
    inputs = [_primary_keys(tree) for tree in trees[:3]]
    for scope, count in _primary_keys(trees[3]).items():
        if count > 1 and all(found.get(scope, 0) < count for found in inputs):
            return f"two primary keys in {scope.rstrip('.') or 'one class'}, one from each side"
    return None


LEAST_ENTRY_CHARS = 4  # below it (``id``, ``pk``), a letter more is another word


def _entries(tree: ast.Module) -> dict[str, set[str]]:
    """Each name the module's or a class's body binds to a list, tuple or set of strings alone
    (by scope and name): its strings."""
    out: dict[str, set[str]] = {}
    for scope, body in class_scopes(tree.body):
        for stmt in body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.List | ast.Tuple | ast.Set)):
                continue
            items = stmt.value.elts
            if items and all(isinstance(i, ast.Constant) and isinstance(i.value, str)
                             for i in items):
                strings = {str(item.value) for item in items}  # type: ignore[attr-defined]
                out[f"{scope}{stmt.targets[0].id}"] = strings
    return out


def _spellings(one: str, other: str) -> bool:
    """Two spellings of one entry (see :func:`entry_spelled_twice`)."""
    short, long = sorted((one, other), key=len)
    if len(short) < LEAST_ENTRY_CHARS:
        return False
    if long.startswith(short) and len(long) - len(short) <= 2 and long[len(short):].isalpha():
        return True

    def bare(text: str) -> str:
        return text.lower().replace("_", "").replace("-", "")

    return bare(one) == bare(other)


def entry_spelled_twice(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result."""
    base, ours, theirs, merged = (_entries(tree) for tree in trees)
    for key, entries in merged.items():
        before = base.get(key, set())
        mine = ours.get(key, set()) - before - theirs.get(key, set())
        yours = theirs.get(key, set()) - before - ours.get(key, set())
        for one in sorted(mine & entries):
            for other in sorted(yours & entries):
                if _spellings(one, other):
                    return f"one entry of {key} added spelled two ways: {one!r}, {other!r}"
    return None
