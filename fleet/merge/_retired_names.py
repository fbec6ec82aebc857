"""Whole-file checks for a name one side retired while the other side adds code that needs it,
found in the sixteenth unseen set (5 Dec 2026); each clean result failed at run time where the
humans rewrote the new code. The file conflicts instead.

- :func:`fixture_retired`: a parameter of test functions (a pytest fixture) that base takes in
  three or more tests, that one side takes in none, having a new parameter name about as often
  (the fixture renamed), while the other side adds tests taking the old one and the result
  keeps one (pipenv ``293b7860c094``: ours renamed ``PipenvInstance`` to
  ``pipenv_instance_pypi`` in every test, theirs added a test taking ``PipenvInstance``; saleor
  ``5bd498d7f22e``: ``promotion`` -> ``catalogue_promotion``). Not where the file itself binds
  the old name (a fixture defined here).
- :func:`member_removed`: an attribute a class binds in its body in base (``name =
  models.CharField(...)``, a ``def``), that one side's version of the class binds nowhere (not in
  its body, not as ``self.x = ...``) and reads nowhere, its bases unchanged, while the other
  side adds ``self.x`` reads in the class and the result keeps one and binds it nowhere in the
  class (saleor ``078fae8975b3``: ours replaced the field ``name`` by ``brand_name``, theirs
  added ``__str__`` returning ``self.name``). Not where another class of the result binds it (a
  base class moved into the file may).
"""

from __future__ import annotations

import ast
from collections import Counter

from fleet.merge import _parsed
from fleet.merge._ordering import bound_at_top

__all__ = ["fixture_retired", "member_removed"]


def _test_parameters(tree: ast.Module) -> dict[str, list[str]]:
    """Each test function (``test*``, at any depth; one name defined twice: the last) -> its
    parameters in order."""
    found = _parsed.nodes(tree)
    tests: dict[str, list[str]] = {}
    for function in _parsed.of(found, ast.FunctionDef) + _parsed.of(found, ast.AsyncFunctionDef):
        if function.name.startswith("test"):
            args = function.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            tests[function.name] = [a.arg for a in every]
    return tests


def _renamed_in_place(before: dict[str, list[str]], after: dict[str, list[str]], name: str) -> bool:
    """Whether the tests taking ``name`` in ``before`` that ``after`` still has take, at its
    place, a parameter no test of ``before`` takes, in at least two of three of them (a fixture
    renamed, or split in two, not a test rewritten to use others)."""
    known = {p for parameters in before.values() for p in parameters}
    placed = still = 0
    for test, parameters in before.items():
        if name not in parameters or test not in after:
            continue
        still += 1
        now = after[test]
        index = parameters.index(name)
        if len(now) == len(parameters) and now[index] not in known:
            placed += 1
    return placed > 0 and placed * 3 >= still * 2


def fixture_retired(trees: list[ast.Module], least: int = 3) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    tests = [_test_parameters(tree) for tree in trees]
    base, ours, theirs, merged = (
        Counter(p for parameters in found.values() for p in parameters) for found in tests
    )
    for name, count in base.items():
        if count < least or not merged[name]:
            continue
        for gone, other, side in ((ours, theirs, tests[1]), (theirs, ours, tests[2])):
            if gone[name] or other[name] <= count:
                continue
            if _renamed_in_place(tests[0], side, name) and name not in bound_at_top(trees[3]):
                return (
                    f"one side renamed the fixture {name} in every test; the other adds tests "
                    "taking it"
                )
    return None


def _bases(node: ast.ClassDef) -> list[str]:
    return [ast.dump(base) for base in node.bases]


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    """Classes by name (at any depth); a name defined twice is left out."""
    found: dict[str, ast.ClassDef] = {}
    twice: set[str] = set()
    for node in _parsed.of(_parsed.nodes(tree), ast.ClassDef):
        if node.name in found:
            twice.add(node.name)
        found[node.name] = node
    return {name: node for name, node in found.items() if name not in twice}


def _body_names(node: ast.ClassDef) -> set[str]:
    """What a class body binds: its assignments' names, its functions and nested classes."""
    names: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _self_attributes(node: ast.ClassDef) -> tuple[Counter[str], set[str]]:
    """(how often ``self.x`` is read in the class's code, the ``x`` it assigns through
    ``self``)."""
    read: Counter[str] = Counter()
    stored: set[str] = set()
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == "self"
        ):
            if isinstance(sub.ctx, ast.Load):
                read[sub.attr] += 1
            else:
                stored.add(sub.attr)
    return read, stored


def member_removed(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_classes(tree) for tree in trees)
    for name, merged_class in merged.items():
        before = base.get(name)
        if before is None:
            continue
        read, stored = _self_attributes(merged_class)
        loose = (set(read) & _body_names(before)) - _body_names(merged_class) - stored
        if not loose:
            continue  # (most classes: reads of inherited attributes, or none gone)
        for side, other in ((ours.get(name), theirs.get(name)), (theirs.get(name), ours.get(name))):
            if side is None or other is None or _bases(side) != _bases(before):
                continue
            side_read, side_stored = _self_attributes(side)
            other_read = _self_attributes(other)[0]
            base_read = _self_attributes(before)[0]
            for attribute in sorted(loose):
                if attribute in _body_names(side) or attribute in side_stored:
                    continue
                if side_read[attribute] or other_read[attribute] <= base_read[attribute]:
                    continue
                others = (c for c in merged.values() if c is not merged_class)
                if any(attribute in _body_names(c) for c in others):
                    continue
                return f"one side removed {name}.{attribute}; the other adds self.{attribute} reads"
    return None
