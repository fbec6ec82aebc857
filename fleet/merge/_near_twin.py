"""One definition both sides added at one place under two names, its body written two ways
(pyqtgraph ``6128c2dfba29``, ``tests/parametertree/test_parametertypes.py``: ours added
``test_set_to_default_updates_reset_action``, asserting ``item._defaultAct.isEnabled()``, theirs
``test_set_to_default_updates_reset_button``, asserting ``item.defaultBtn.isEnabled()``, both
before ``test_data_race``; the merge kept both, theirs' failing against ours' code; the humans
kept ours'). :func:`~fleet.merge._twice.added_under_two_names` finds the equal bodies; this the
near ones. In one scope (the module, a class), a function only ours added and one only theirs
added, both in the result, are one test written twice when

- each sits between the same two statements of base (its neighbours that base has);
- they take the same parameters and decorators, and their bodies have the same statements
  (three or more) but for a consistent renaming of one or two identifiers (``_defaultAct`` for
  ``defaultBtn`` each time), in at most half of the statements;
- each renamed identifier is one the other side's file never uses, and no word of it is a word
  by which the two names differ (``test_foo_int`` reading ``as_int`` beside ``test_foo_float``
  reading ``as_float`` are two tests named for what tells them apart).

Or, at the same place, with the same parameters and decorators, one body is the other's under a
guard (:func:`_guarded`): the other's whole body (docstring aside) is the body of the one
``if``/``with``/``try`` this one's holds, the names each binds renamed in order (nilearn
``c4737e347913``: ours' ``PolyData._set_dtype`` looping over the parts to cast them, theirs'
``_set_data_dtype`` the same loop with its own loop names under ``if dtype is not None:``; the
merge kept both, and the two behave apart on ``None``; the humans kept one, guarded). Bodies
under 12 nodes (``pass``, ``return self.x``) are never twins this way. Or one body is the
other's with one or two lines more (:func:`_extended`).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator

from fleet.merge import _parsed

__all__ = ["class_scopes", "near_twins", "string_statement", "words"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
# The fields that hold identifiers: blanked to compare shapes, collected to compare names.
_IDENTIFIERS = {ast.Name: "id", ast.Attribute: "attr", ast.arg: "arg", ast.keyword: "arg"}
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def class_scopes(
    body: list[ast.stmt], scope: str = ""
) -> Iterator[tuple[str, list[ast.stmt]]]:
    """(scope, its statements) for the module's body and each class's, nested classes too."""
    yield scope, body
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield from class_scopes(stmt.body, f"{scope}{stmt.name}.")


def _key(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return f"{type(stmt).__name__} {stmt.name}"
    return ast.dump(stmt)


def _added(
    body: list[ast.stmt], base: set[str], gone: set[str], kept: set[str]
) -> Iterator[tuple[_Function, tuple[str | None, str | None]]]:
    """Each function of ``body`` that is in ``kept`` but neither in ``base`` nor in ``gone``
    (the other side's keys), with the keys of its nearest neighbours base has."""
    keys = [_key(stmt) for stmt in body]
    for index, stmt in enumerate(body):
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if keys[index] in base or keys[index] in gone or keys[index] not in kept:
            continue
        before = next((k for k in reversed(keys[:index]) if k in base), None)
        after = next((k for k in keys[index + 1 :] if k in base), None)
        yield stmt, (before, after)


def _identifiers(stmt: ast.stmt) -> tuple[str, list[str]]:
    """The statement's dump with its identifiers blanked, and the identifiers in order."""
    blank = copy.deepcopy(stmt)
    names: list[str] = []
    for node in ast.walk(blank):
        field = _IDENTIFIERS.get(type(node))
        if field is not None and isinstance(getattr(node, field), str):
            names.append(getattr(node, field))
            setattr(node, field, "_")
    return ast.dump(blank), names


def _renamed(left: _Function, right: _Function) -> set[tuple[str, str]] | None:
    """The identifiers ``right``'s body renames ``left``'s (see the module docstring), or None
    when the two differ otherwise, not at all, or too much."""
    if ast.dump(left.args) != ast.dump(right.args) or len(left.body) != len(right.body):
        return None
    if [ast.dump(d) for d in left.decorator_list] != [ast.dump(d) for d in right.decorator_list]:
        return None
    if len(left.body) < 3 or type(left) is not type(right):
        return None
    pairs: set[tuple[str, str]] = set()
    changed = 0
    for one, two in zip(left.body, right.body, strict=True):
        (shape, names), (other_shape, other_names) = _identifiers(one), _identifiers(two)
        if shape != other_shape:
            return None
        found = {(a, b) for a, b in zip(names, other_names, strict=True) if a != b}
        changed += bool(found)
        pairs |= found
    lefts, rights = {a for a, _ in pairs}, {b for _, b in pairs}
    if not 1 <= len(pairs) <= 2 or len(lefts) != len(pairs) or len(rights) != len(pairs):
        return None
    return pairs if changed * 2 <= len(left.body) else None


_GUARDS = (ast.If, ast.With, ast.AsyncWith, ast.Try)
_SMALLEST = 12  # ast nodes of the bare body: below it, bodies are alike by chance


def string_statement(stmt: ast.stmt) -> bool:
    """A statement that is a string alone (a docstring where it opens a body)."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _own_body(function: _Function) -> list[ast.stmt]:
    """The function's body without its docstring."""
    body = function.body
    return body[1:] if body and string_statement(body[0]) else body


def _bound_renamed(body: list[ast.stmt]) -> str:
    """The statements' dump with each name they bind (loop and assignment targets) renamed in
    the order first bound: ``for k, v in ...`` and ``for h, v in ...`` read alike."""
    copies = [copy.deepcopy(stmt) for stmt in body]
    order: dict[str, str] = {}
    for stmt in copies:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                order.setdefault(node.id, f"_{len(order)}")
    for stmt in copies:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id in order:
                node.id = order[node.id]
    return "\n".join(ast.dump(stmt) for stmt in copies)


def _guarded(bare: _Function, guarded: _Function) -> bool:
    """``guarded``'s body is one ``if``/``with``/``try`` around ``bare``'s whole body (see the
    module docstring), with the same parameters and decorators."""
    if type(bare) is not type(guarded) or ast.dump(bare.args) != ast.dump(guarded.args):
        return False
    if [ast.dump(d) for d in bare.decorator_list] != [ast.dump(d) for d in guarded.decorator_list]:
        return False
    inner, outer = _own_body(bare), _own_body(guarded)
    if len(outer) != 1 or not isinstance(outer[0], _GUARDS) or not inner:
        return False
    if sum(1 for stmt in inner for _ in ast.walk(stmt)) < _SMALLEST:
        return False
    return _bound_renamed(inner) == _bound_renamed(outer[0].body)


def _lines(function: _Function) -> list[str]:
    return [line for stmt in _own_body(function) for line in ast.unparse(stmt).splitlines()]


def _extended(short: _Function, long: _Function) -> bool:
    """``long``'s body is ``short``'s with one or two lines more, in order, and the same
    parameters and decorators (conan ``e37abd2b7635``: one block moved into a new method by each
    side, ``resolve_alias`` and ``replace_alias``, the second with a ``return True`` more; the
    merge kept both). Not for tests, which are written as near copies of each other."""
    if type(short) is not type(long) or ast.dump(short.args) != ast.dump(long.args):
        return False
    if short.name.startswith("test") and long.name.startswith("test"):
        return False
    if [ast.dump(d) for d in short.decorator_list] != [ast.dump(d) for d in long.decorator_list]:
        return False
    lines, more = _lines(short), iter(_lines(long))
    extra = len(_lines(long)) - len(lines)
    return len(lines) >= 4 and 0 < extra <= 2 and all(line in more for line in lines)


def words(name: str) -> set[str]:
    """The lowercase words of an identifier, ``snake_case`` or ``CamelCase``."""
    return {word.lower() for word in _WORD.findall(name)}


def _names(tree: ast.Module) -> set[str]:
    found = _parsed.nodes(tree)
    out = {node.id for node in _parsed.of(found, ast.Name)}
    return out | {node.attr for node in _parsed.of(found, ast.Attribute)}


def near_twins(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    scopes = [dict(class_scopes(tree.body)) for tree in trees]
    for scope, body in scopes[3].items():
        if scope not in scopes[1] or scope not in scopes[2]:
            continue
        ours, theirs = scopes[1][scope], scopes[2][scope]
        base = {_key(stmt) for stmt in scopes[0].get(scope, [])}
        kept = {_key(stmt) for stmt in body}
        for left, place in _added(ours, base, {_key(stmt) for stmt in theirs}, kept):
            for right, other_place in _added(theirs, base, {_key(stmt) for stmt in ours}, kept):
                if place != other_place:
                    continue
                if _guarded(left, right) or _guarded(right, left):
                    return (
                        f"both sides added one definition at one place under two names, one "
                        f"of them under a guard: {scope}{left.name} and {right.name}"
                    )
                if _extended(left, right) or _extended(right, left):
                    return (
                        f"both sides added one definition at one place under two names, one "
                        f"of them with a line or two more: {scope}{left.name} and {right.name}"
                    )
                pairs = _renamed(left, right)
                if pairs is None:
                    continue
                differ = words(left.name) ^ words(right.name)
                used = [_names(trees[2]), _names(trees[1])]
                if any(a in used[0] or b in used[1] for a, b in pairs):
                    continue  # each side's file speaks the other's word: two tests
                if any(words(a) & differ or words(b) & differ for a, b in pairs):
                    continue
                return (
                    f"both sides added one definition at one place under two names, written "
                    f"two ways: {scope}{left.name} and {right.name}"
                )
    return None
