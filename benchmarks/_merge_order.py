"""The judge's ``order_only`` (``_merge_judge``): a clean merge that holds the humans' module
statements in another order, where only independent statements that bind names were swapped."""

from __future__ import annotations

import ast

from fleet.merge.equivalence import canonical_dump, type_checking

__all__ = ["_same_statements", "order_only"]


def _binds_only(stmt: ast.stmt) -> bool:
    """A statement whose only effect is to bind names: an import (also one guarded by ``try`` or
    by ``if TYPE_CHECKING:``), a ``def``/``class``, or an assignment whose value calls nothing."""
    if isinstance(stmt, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef):
        return True
    if type_checking(stmt):
        return all(isinstance(s, ast.Import | ast.ImportFrom) for s in stmt.body)
    if isinstance(stmt, ast.AsyncFunctionDef):
        return True
    if isinstance(stmt, ast.Try):
        inner = [*stmt.body, *stmt.orelse, *stmt.finalbody]
        inner += [s for handler in stmt.handlers for s in handler.body]
        return all(isinstance(s, ast.Import | ast.ImportFrom | ast.Pass) for s in inner)
    if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
        return not any(isinstance(node, ast.Call) for node in ast.walk(stmt.value))
    return False


def _names_of(stmt: ast.stmt) -> set[str]:
    """Every name a statement reads or binds (conservative: any shared name is a dependence)."""
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return names


def _same_statements(merged: str, actual: str) -> tuple[
        list[ast.stmt], list[list[str | None]], dict[str | None, int]] | None:
    """``merged``'s module statements, both bodies' canonical dumps and each human statement's
    place, when the two hold the same statements in another order (each once), else None."""
    mine, human = (ast.parse(text).body for text in (merged, actual))
    dumps = [[canonical_dump(ast.unparse(stmt)) for stmt in body] for body in (mine, human)]
    if sorted(map(str, dumps[0])) != sorted(map(str, dumps[1])) or dumps[0] == dumps[1]:
        return None
    place = {dump: index for index, dump in enumerate(dumps[1])}
    if len(place) != len(dumps[1]):
        return None  # a statement twice: which is which is unknown
    return mine, dumps, place


def _bound(stmt: ast.stmt) -> set[str]:
    """The module names a statement binds (a def/class, its imports, its assignment targets)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return {n.asname or n.name.split(".")[0] for n in ast.walk(stmt) if isinstance(n, ast.alias)}


def _callee(node: ast.expr) -> str:  # the name a call's callee starts from
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def order_only(merged: str, actual: str) -> bool:
    """``merged`` holds the humans' module statements, and differs only in the order of some
    that only bind names, neither binding a name the other reads or binds (both sides' additions
    at one point, in the other order). An assignment that calls may swap when each call is
    ``TypeVar``/``NewType`` or a class or def swapped with it (pydantic d926ea62f558)."""
    same = _same_statements(merged, actual)
    if same is None:
        return False
    mine, dumps, place = same
    n = len(mine)  # swapped[i][j] (i < j): merged has i first, the humans j first
    swapped = [[place[dumps[0][j]] < place[dumps[0][i]] for j in range(n)] for i in range(n)]

    def movable(i: int, j: int) -> bool:  # mine[i] may swap with mine[j]
        stmt = mine[i]
        if _binds_only(stmt):
            return True
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
            return False
        defs = (ast.ClassDef, ast.FunctionDef)
        moving = {name for k in range(n) if swapped[min(j, k)][max(j, k)]
                  and isinstance(mine[k], defs) for name in _bound(mine[k])}
        calls = [_callee(c.func) for c in ast.walk(stmt.value) if isinstance(c, ast.Call)]
        return all(c in ("TypeVar", "NewType") or c in moving for c in calls)

    for i, first in enumerate(mine):
        for j in range(i + 1, n):
            if not swapped[i][j]:
                continue
            if not (movable(i, j) and movable(j, i)):
                return False
            if _bound(first) & _names_of(mine[j]) or _bound(mine[j]) & _names_of(first):
                return False
    return True
