"""Whole-result check, from the fortieth unseen set (7 Dec 2026): one side renamed a name it
imports, the other added the new name beside the old one, and the merge dropped the old one
(astroid ``d052e7e223d3`` and again ``e7d90b65cbe8``, ``astroid/__init__.py``: base
``from astroid.util import YES``, ours ``... import Uninferable``, theirs ``... import
Uninferable, YES``, the old name kept for backward compatibility, as its ``util.py`` says; the
merge took ours' removal, so ``astroid.YES`` was gone for every user outside; the humans kept
it both times). Whether the old name still has users is not in the file: the file conflicts.

For each module a file imports names from: one side replaced one name by another, the other
side added that other name and kept the first without using it (only for its importers), and
the result lacks the first. Where the keeping side uses it, the other side replaced those uses
too, and the name went with them (manim ``d6ea8412d696``: ours moved ``ThreeDVMobject`` off
``VMobject``, theirs only added ``VectorizedPoint`` to the import; the humans dropped it too)."""

from __future__ import annotations

import ast

from fleet.merge import _parsed
from fleet.merge._unbound import names

__all__ = ["alias_dropped"]


def _imported(tree: ast.Module) -> dict[tuple[int, str], set[str]]:
    """The names each ``from ... import`` binds, by (level, module), the whole file's."""
    out: dict[tuple[int, str], set[str]] = {}
    for node in _parsed.of(_parsed.nodes(tree), ast.ImportFrom):
        names = out.setdefault((node.level, node.module or ""), set())
        names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
    return out


def _renamed_and_aliased(before: set[str], renamed: set[str], aliased: set[str]) -> str | None:
    """The old name, where ``renamed`` is ``before`` with one name replaced by a new one and
    ``aliased`` is ``before`` with that new name added, else None."""
    new, old = renamed - before, before - renamed
    if len(new) == 1 and len(old) == 1 and aliased == before | new:
        return old.pop()
    return None


def alias_dropped(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_imported(tree) for tree in trees)
    for key, before in base.items():
        left, right, after = ours.get(key, set()), theirs.get(key, set()), merged.get(key, set())
        for keeper, old in ((2, _renamed_and_aliased(before, left, right)),
                            (1, _renamed_and_aliased(before, right, left))):
            if old is not None and old not in after and old not in names(trees[keeper])[0]:
                return (f"one side renamed {old} imported from {key[1] or '.'}, the other "
                        "kept it beside the new name")
    return None

