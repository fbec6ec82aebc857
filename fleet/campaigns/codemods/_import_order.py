"""Where a name a codemod needs goes in an existing ``from module import ...``.

LibCST's ``AddImportsVisitor`` puts every name it adds in front of the statement's names, on the
first name's line: WebOb 1.8.7's one-name-per-line ``from datetime import (date, datetime,
timedelta)`` became ``timezone, date,`` on one line, and python-jose's ``from datetime import
datetime, timedelta`` became ``timezone, datetime, timedelta``: a diff no maintainer writes, and
one that an isort or ruff ``I001`` check in the target's own CI fails. :func:`place_added_names`
moves each added name to where the statement's order puts it: sorted as isort and ruff sort
(constants, classes, then the rest, each case-insensitively) or alphabetically, when the names
already were; after the last name otherwise. Each moved name takes the separator the statement
already uses (``, `` or a new line with its indent), and the last name's own trailing comma and
line break stay last.

The names added are those no top-level ``from`` import bound before the codemod ran (LibCST's
``RemoveImportsVisitor`` rewrites the commas of the statements it touches, so a comma cannot
tell, and a codemod may repoint a statement to another module: pydantic v1's compatibility
module to ``pydantic``). A statement the codemod added whole, and one nobody added a name to,
are left exactly as they are; the names already there keep their own commas (and the comments
after them).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

import libcst as cst

__all__ = ["place_added_names"]

Key = Callable[[str], tuple[object, ...]]


def place_added_names(before: cst.Module, after: cst.Module) -> cst.Module:
    """``after`` (a codemod's result on ``before``) with the names it added to ``from``
    imports put in their place."""
    had: set[tuple[str, str | None]] = set()
    for statement in before.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names,
                                                                        cst.ImportStar):
                    had.update(_bound(a) for a in small.names)
    if not had:
        return after
    body = [statement.with_changes(body=[_place(small, had) for small in statement.body])
            if isinstance(statement, cst.SimpleStatementLine) else statement
            for statement in after.body]
    return after.with_changes(body=body)


def _bound(alias: cst.ImportAlias) -> tuple[str, str | None]:
    asname = alias.asname
    return _name(alias), (cst.Module([]).code_for_node(asname.name) if asname else None)


def _by_type(name: str) -> tuple[object, ...]:
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name.lower(), name)


def _alphabetical(name: str) -> tuple[object, ...]:
    return (name.lower(), name)


def _name(alias: cst.ImportAlias) -> str:
    node = alias.name
    return node.value if isinstance(node, cst.Name) else cst.Module([]).code_for_node(node)


def _order(names: Sequence[str]) -> Key | None:
    for key in (_by_type, _alphabetical):
        keys = [key(n) for n in names]
        if keys == sorted(keys):
            return key
    return None


def _place(small: cst.BaseSmallStatement,
           had: set[tuple[str, str | None]]) -> cst.BaseSmallStatement:
    """A top-level statement with its added names placed (only ``from`` imports have any)."""
    if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
        return small
    names = list(small.names)
    added = [a for a in names if _bound(a) not in had]
    existing = [a for a in names if _bound(a) in had]
    if not added or not existing:  # nothing added, or a statement added whole
        return small
    return small.with_changes(names=_placed(added, existing, names[-1].comma))


def _placed(added: Sequence[cst.ImportAlias], existing: Sequence[cst.ImportAlias],
            trailing: cst.Comma | cst.MaybeSentinel) -> list[cst.ImportAlias]:
    """``existing`` in its order with ``added`` put in it; ``trailing``: what follows the
    statement's last name (nothing, or a trailing comma and the line break before ``)``)."""
    separator = next((a.comma for a in existing[:-1] if isinstance(a.comma, cst.Comma)),
                     cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    key = _order([_name(a) for a in existing])
    out = [*existing[:-1], existing[-1].with_changes(comma=trailing)]
    for alias in sorted(added, key=lambda a: (key or _alphabetical)(_name(a))):
        at = (bisect.bisect_right([key(_name(a)) for a in out], key(_name(alias)))
              if key is not None else len(out))
        if at < len(out):
            out.insert(at, alias.with_changes(comma=separator))
        else:
            last = out[-1]
            out[-1] = last.with_changes(comma=separator)
            out.append(alias.with_changes(comma=last.comma))
    return out
