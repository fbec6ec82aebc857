"""A whole-result check: one statement both sides added to a function, each at its own place,
kept at both places (Pillow ``bb324671270d``, ``Tests/test_file_mpo.py``: ``assert mpinfo is not
None`` added inside a ``with`` block on one side and after it on the other; the merge asserted
twice, the humans kept one). Which place is meant is unknown, so the file conflicts."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

__all__ = ["added_twice"]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _trivial(stmt: ast.stmt) -> bool:
    """Statements any two edits may both write (``pass``, ``break``, a bare ``return``)."""
    if isinstance(stmt, ast.Pass | ast.Break | ast.Continue):
        return True
    if isinstance(stmt, ast.Return):
        return stmt.value is None or (
            isinstance(stmt.value, ast.Constant) and stmt.value.value is None
        )
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _simple(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A function's simple statements, those inside its compound statements included (not
    those of the functions and classes it defines)."""
    for stmt in body:
        if isinstance(stmt, _DEFS):
            continue
        blocks = [
            getattr(stmt, field, None) for field in ("body", "orelse", "finalbody", "handlers")
        ]
        blocks += [case.body for case in getattr(stmt, "cases", [])]
        if not any(isinstance(block, list) for block in blocks):
            yield stmt
            continue
        for block in blocks:
            if isinstance(block, list):
                for item in block:
                    yield from _simple(item.body if isinstance(item, ast.ExceptHandler) else [item])


def _functions(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, list[ast.stmt]]]:
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield from _functions(stmt.body, f"{prefix}{stmt.name}.")
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{stmt.name}", stmt.body
            yield from _functions(stmt.body, f"{prefix}{stmt.name}().")
        elif isinstance(stmt, ast.If | ast.Try | ast.With):
            for field in ("body", "orelse", "finalbody"):
                yield from _functions(getattr(stmt, field, []), prefix)


def _counts(tree: ast.Module) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for name, body in _functions(tree.body):
        counter = out.setdefault(name, Counter())
        counter.update(ast.dump(stmt) for stmt in _simple(body) if not _trivial(stmt))
    return out


def added_twice(trees: list[ast.Module]) -> str | None:
    """In a function all four versions (base, ours, theirs, the result) define, a statement
    both sides added (each holds it more often than the base) that the result holds more often
    than either side: each added it at its own place. None when there is none."""
    base, ours, theirs, merged = (_counts(tree) for tree in trees)
    for name, counter in merged.items():
        if name not in base or name not in ours or name not in theirs:
            continue
        for text, count in counter.items():
            before, left, right = base[name][text], ours[name][text], theirs[name][text]
            # Both sides added it (not a statement the merge wrote from two edits of one).
            if min(left, right) > before and count > max(left, right):
                return f"a statement both sides added to {name} would be there {count} times"
    return None
