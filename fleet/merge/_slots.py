"""A class's ``__slots__`` that one side completed, and an attribute the other side added that
the result's slots lack.

python-telegram-bot ``86bec4ad0278`` (``telegram/ext/dispatcher.py``) and ``9fb7b6d5e55b``
(``telegram/ext/defaults.py``), eighteenth unseen set: one side gave a class a literal
``__slots__`` listing every ``self.X`` its methods store; the other side added a method
storing ``self.context_types``; the merge kept both, so the new attribute has no slot (an
``AttributeError``, or, with ``__dict__`` among the slots, exactly the instance dictionary the
side meant to empty). A side's slots count as complete when they hold every attribute that
side's methods store on ``self``; the rule fires only when such a side changed the slots and
the result stores, on ``self`` in that class, an attribute the other side added that the
result's slots do not hold.
"""

from __future__ import annotations

import ast

from fleet.merge import _parsed

__all__ = ["slot_added_outside"]

# class name -> (its literal ``__slots__`` or None, the attributes its methods store on self)
_Classes = dict[str, tuple[frozenset[str] | None, frozenset[str]]]


def _slots(node: ast.ClassDef) -> frozenset[str] | None:
    found = None
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__slots__" for target in stmt.targets
        ):
            value = stmt.value
            if isinstance(value, ast.Tuple | ast.List) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
            ):
                found = frozenset(str(e.value) for e in value.elts)  # type: ignore[attr-defined]
            else:
                found = None  # computed slots: nothing to compare
    return found


def _stores(node: ast.ClassDef) -> frozenset[str]:
    out: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(stmt):
                if (
                    isinstance(inner, ast.Attribute)
                    and isinstance(inner.ctx, ast.Store)
                    and isinstance(inner.value, ast.Name)
                    and inner.value.id == "self"
                ):
                    out.add(inner.attr)
    return frozenset(out)


def _classes(tree: ast.Module) -> _Classes:
    return {
        node.name: (_slots(node), _stores(node))
        for node in _parsed.of(_parsed.nodes(tree), ast.ClassDef)
    }


def slot_added_outside(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    if not any(
        "__slots__" in {t.id for t in _parsed.of(_parsed.nodes(tree), ast.Name)}
        for tree in trees[1:3]
    ):
        return None
    base, ours, theirs, merged = (_classes(tree) for tree in trees)
    for side, other in ((ours, theirs), (theirs, ours)):
        for name, (slots, stores) in side.items():
            if slots is None or base.get(name, (None, frozenset()))[0] == slots:
                continue  # no literal slots, or this side did not change them
            if not stores or not stores <= slots:
                continue  # this side's own slots are not complete
            if name not in other or merged.get(name, (None, frozenset()))[0] is None:
                continue
            added = other[name][1] - base.get(name, (None, frozenset()))[1]
            result_slots, result_stores = merged[name]
            assert result_slots is not None
            missing = sorted(a for a in added & result_stores if a not in result_slots)
            if missing:
                return (f"{name}.__slots__ was completed on one side, and {missing[0]}, added "
                        "on the other, has no slot in the result")
    return None
