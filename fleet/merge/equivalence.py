"""Whether two merge results mean the same program, as a reviewer comparing them would judge.

``same_program(a, b)`` compares the syntax trees (comments and formatting ignored) after putting
into a canonical order what a merge may order either way: the names of one ``from m import ...``,
the strings of ``__all__ = [...]`` (what ``from m import *`` exports is a set), each run of
adjacent imports (one name per import: ``from m import a, b`` is ``from m import a`` and ``from m
import b``) and each run of adjacent ``def``/``class`` statements in a module or class body or
an ``if TYPE_CHECKING:`` block (imports only a type checker runs), and in a function's blocks
each run (of up to 64) of plain assignments that may swap places (``_independent``: neither binds
what the other binds or reads, no stateful call: ``self.a = hs.get_a()`` beside ``self.b =
hs.get_b()``), and the keyword arguments of a call (``_keywords``: not of ``dict(...)``, none
a ``**`` nor holding a stateful call). Every other statement keeps its place. The
real-history benchmark uses it to compare a merge with the result the humans committed.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from fleet import pyast
from fleet.merge._independent import Facts, facts, independent, orderless
from fleet.merge._keywords import ORDERED_CALLEES

__all__ = ["canonical_dump", "same_program", "type_checking"]

_DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORT = (ast.Import, ast.ImportFrom)


def type_checking(stmt: ast.stmt) -> TypeGuard[ast.If]:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) without an ``else``."""
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return False
    test = stmt.test
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING" and isinstance(test.value, ast.Name)
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _run_kind(stmt: ast.stmt) -> str:
    if isinstance(stmt, _IMPORT):
        return "import"
    if isinstance(stmt, _DEFINITION):
        return "definition"
    return ""


def _one_per_name(stmt: ast.stmt) -> list[ast.stmt]:
    if isinstance(stmt, ast.Import):
        return [ast.Import(names=[alias]) for alias in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        return [ast.ImportFrom(stmt.module, [alias], stmt.level) for alias in stmt.names]
    return [stmt]


def _canonical_body(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []
    kind = ""
    for stmt in [*body, None]:
        this = _run_kind(stmt) if stmt is not None else ""
        if run and (this != kind or stmt is None):  # the last run too, whatever its kind
            if kind == "import":  # ``from m import a, b`` binds as ``from m import a`` + ``b``
                run = [one for stmt_ in run for one in _one_per_name(stmt_)]
            out.extend(sorted(run, key=ast.dump) if kind else run)
            run = []
        if stmt is None:
            break
        kind = this
        run.append(stmt)
    return out


_LONGEST = 64  # statements in one run of swappable assignments that are put in order


def _swappable(body: list[ast.stmt]) -> list[ast.stmt]:
    """Each run of adjacent plain assignments in its least order (by dump) among those that keep
    every dependent pair as it was: one order for all the orders the swaps allow."""
    out: list[ast.stmt] = []
    run: list[tuple[ast.stmt, Facts]] = []
    for stmt in [*body, None]:
        found = facts(stmt) if stmt is not None else None
        if found is not None and stmt is not None:
            run.append((stmt, found))
            continue
        left = list(range(len(run)))
        if len(run) > _LONGEST:  # a long run stays as it is: ordering it costs n**3
            out.extend(stmt_ for stmt_, _ in run)
            left = []
        while left:
            ready = [
                i for i in left
                if all(independent(run[j][1], run[i][1]) for j in left if j < i)
            ]
            first = min(ready, key=lambda i: ast.dump(run[i][0]))
            out.append(run[first][0])
            left.remove(first)
        run = []
        if stmt is not None:
            out.append(stmt)
    return out


class _Canonical(ast.NodeTransformer):
    in_function = False  # assignments swap only in a function's blocks, never in a class's

    def generic_visit(self, node: ast.AST) -> ast.AST:
        node = super().generic_visit(node)
        if not self.in_function:
            return node
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, _swappable(block))
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if (
            all(k.arg for k in node.keywords)
            and pyast.call_name(node.func) not in ORDERED_CALLEES
            and all(orderless(k.value) for k in node.keywords)
        ):
            node.keywords.sort(key=lambda k: k.arg or "")
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom:
        node.names.sort(key=lambda alias: (alias.name, alias.asname or ""))
        return node

    def visit_Import(self, node: ast.Import) -> ast.Import:
        node.names.sort(key=lambda alias: (alias.name, alias.asname or ""))
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.Assign:
        value = node.value
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if (
            names == ["__all__"]
            and isinstance(value, ast.List | ast.Tuple)
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts)
        ):
            value.elts.sort(key=lambda e: str(e.value) if isinstance(e, ast.Constant) else "")
        return node

    def _scope(self, node: ast.Module | ast.ClassDef) -> ast.AST:
        self.generic_visit(node)
        node.body = _canonical_body(node.body)
        return node

    def _inside(self, node: ast.AST, function: bool) -> ast.AST:
        outer, self.in_function = self.in_function, function
        try:
            if isinstance(node, ast.Module | ast.ClassDef):
                return self._scope(node)
            return self.generic_visit(node)
        finally:
            self.in_function = outer

    def visit_Module(self, node: ast.Module) -> ast.AST:
        return self._inside(node, False)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return self._inside(node, False)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._inside(node, True)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._inside(node, True)

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if type_checking(node):
            node.body = _canonical_body(node.body)
        return node


def canonical_dump(text: str) -> str | None:
    """The canonical AST dump of ``text`` (see the module docstring), None if it does not parse."""
    try:
        tree = pyast.parse(text)
        return ast.dump(_Canonical().visit(tree))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def same_program(a: str, b: str) -> bool:
    """True when both texts parse and are equal up to comments, formatting and the order of
    adjacent definitions, adjacent imports and imported names."""
    dump_a = canonical_dump(a)
    return dump_a is not None and dump_a == canonical_dump(b)
