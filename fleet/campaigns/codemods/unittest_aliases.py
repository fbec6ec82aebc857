"""``ReplaceUnittestAliasesCommand``: the ``TestCase`` method aliases removed in Python 3.12."""

from __future__ import annotations

from typing import Any

import libcst as cst

from fleet.campaigns.codemods._base import ScopedCodemodCommand

__all__ = ["UNITTEST_ALIASES", "ReplaceUnittestAliasesCommand"]

# Deprecated since 3.2. ``assertDictContainsSubset(subset, d)`` has no drop-in replacement; it
# becomes ``assertLessEqual(subset.items(), d.items())`` (items views compare as sets).
UNITTEST_ALIASES: dict[str, str] = {
    "failUnless": "assertTrue",
    "assert_": "assertTrue",
    "failIf": "assertFalse",
    "failUnlessEqual": "assertEqual",
    "assertEquals": "assertEqual",
    "failIfEqual": "assertNotEqual",
    "assertNotEquals": "assertNotEqual",
    "failUnlessAlmostEqual": "assertAlmostEqual",
    "assertAlmostEquals": "assertAlmostEqual",
    "failIfAlmostEqual": "assertNotAlmostEqual",
    "assertNotAlmostEquals": "assertNotAlmostEqual",
    "failUnlessRaises": "assertRaises",
    "assertRegexpMatches": "assertRegex",
    "assertNotRegexpMatches": "assertNotRegex",
    "assertRaisesRegexp": "assertRaisesRegex",
}


class ReplaceUnittestAliasesCommand(ScopedCodemodCommand):
    """Rewrite ``self.<alias>`` (any receiver) to the method's current name: in calls and in
    plain references too (``check = self.assertEquals``, ``assertTrue =
    unittest.TestCase.failUnless``, which the matcher reports alike and which fail on 3.12).
    An alias being assigned or deleted (a compatibility shim defining it) is left alone."""

    DESCRIPTION = "Replace unittest TestCase aliases removed in Python 3.12 by their current names."

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stores: set[int] = set()

    def _store(self, target: cst.BaseExpression) -> None:
        for node in _targets(target):
            self._stores.add(id(node))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._store(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._store(node.target)

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        new = UNITTEST_ALIASES.get(updated_node.attr.value)
        if new is None or id(original_node) in self._stores or not self.in_scope(original_node):
            return updated_node
        self.changes += 1
        return updated_node.with_changes(attr=cst.Name(new))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "assertDictContainsSubset":
            return self._subset(original_node, updated_node, func)
        return updated_node

    def _subset(
        self, original_node: cst.Call, updated_node: cst.Call, func: cst.Attribute
    ) -> cst.Call:
        args = updated_node.args
        if not 2 <= len(args) <= 3 or any(a.keyword or a.star for a in args[:2]):
            return updated_node
        if not self.in_scope(original_node):
            return updated_node
        items = [
            arg.with_changes(value=cst.Call(cst.Attribute(_paren(arg.value), cst.Name("items"))))
            for arg in args[:2]
        ]
        self.changes += 1
        return updated_node.with_changes(
            func=func.with_changes(attr=cst.Name("assertLessEqual")), args=[*items, *args[2:]]
        )


def _targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The attribute nodes a store goes to (through tuple/list unpacking)."""
    if isinstance(target, cst.Tuple | cst.List):
        return [n for el in target.elements for n in _targets(el.value)]
    return [target] if isinstance(target, cst.Attribute) else []


def _paren(value: cst.BaseExpression) -> cst.BaseExpression:
    simple = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Dict, cst.DictComp)
    if isinstance(value, simple):
        return value
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
