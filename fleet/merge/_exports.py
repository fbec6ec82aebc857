"""A package's ``__all__`` one side wrote to list every name the module imports, while the other
side imports more (the twenty-first unseen set, 6 Dec 2026).

Qiskit ``23e5f118a8ee``, ``qiskit/synthesis/multi_controlled/__init__.py``: theirs added an
``__all__`` naming each public name the module imports, ours added
``from .gray_code import generate_gray_code, gray_code_chain``; the clean merge kept theirs'
``__all__`` as it was, so ``from ... import *`` no longer exported ours' two names (the humans
added them to it). The file conflicts when one side added a module-level ``__all__`` (a list or
tuple of strings) that base does not have, holding every public name that side imports at
module level (two at least), and the result keeps it without a public name that only the other
side imports. The same for the module's own public ``def`` and ``class`` names (strawberry
``600c5e2d972d``, the twenty-second set: theirs listed the module's three classes, ours added
``SubscriptionExecutionResult``, left out).
"""

from __future__ import annotations

import ast

__all__ = ["export_missed"]


def _listed(tree: ast.Module) -> set[str] | None:
    """The strings of a module-level ``__all__ = [...]`` (or a tuple), None when there is none
    or it is anything else."""
    found = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets
        ):
            value = stmt.value
            if not isinstance(value, ast.List | ast.Tuple) or not all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
            ):
                return None
            found = {e.value for e in value.elts if isinstance(e, ast.Constant)
                     and isinstance(e.value, str)}
        elif isinstance(stmt, ast.AugAssign | ast.AnnAssign) and isinstance(
            stmt.target, ast.Name
        ) and stmt.target.id == "__all__":
            return None  # built up: not read here
    return found


def _imported(tree: ast.Module) -> set[str]:
    """The public names the module's own ``from ... import`` statements bind at module level."""
    names = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                name = alias.asname or alias.name
                if name != "*" and not name.startswith("_"):
                    names.add(name)
    return names


def _defined(tree: ast.Module) -> set[str]:
    """The public names of the module's own top-level ``def`` and ``class`` statements."""
    return {
        stmt.name for stmt in tree.body
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not stmt.name.startswith("_")
    }


def export_missed(texts: list[str], trees: list[ast.Module]) -> str | None:
    """``texts`` and ``trees``: base, ours, theirs, result (see the module docstring)."""
    if "__all__" in texts[0] or "__all__" not in texts[3]:
        return None
    merged = _listed(trees[3])
    if merged is None:
        return None
    for kind, names in (("imported", _imported), ("defined", _defined)):
        present = names(trees[3])
        for side, other in ((trees[1], trees[2]), (trees[2], trees[1])):
            listed = _listed(side)
            own = names(side)
            if listed is None or len(own) < 2 or not own <= listed:
                continue
            missed = sorted((names(other) - own - names(trees[0])) & present - merged)
            if missed:
                return f"{missed[0]} is {kind} but not in the __all__ the other side wrote"
    return None
