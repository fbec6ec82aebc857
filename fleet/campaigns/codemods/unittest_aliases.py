"""``ReplaceUnittestAliasesCommand``: the ``TestCase`` method aliases removed in Python 3.12."""

from __future__ import annotations

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
    """Rewrite ``self.<alias>(...)`` (any receiver) to the method's current name."""

    DESCRIPTION = "Replace unittest TestCase aliases removed in Python 3.12 by their current names."

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if not isinstance(func, cst.Attribute):
            return updated_node
        if func.attr.value == "assertDictContainsSubset":
            return self._subset(original_node, updated_node, func)
        new = UNITTEST_ALIASES.get(func.attr.value)
        if new is None or not self.in_scope(original_node):
            return updated_node
        self.changes += 1
        return updated_node.with_changes(func=func.with_changes(attr=cst.Name(new)))

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


def _paren(value: cst.BaseExpression) -> cst.BaseExpression:
    simple = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Dict, cst.DictComp)
    if isinstance(value, simple):
        return value
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
