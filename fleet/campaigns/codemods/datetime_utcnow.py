"""``ReplaceUtcnowCommand``: ``datetime.utcnow()`` -> ``datetime.now(UTC)``.

The rewrite turns naive values into aware ones, which changes behaviour where the result is
compared with (or subtracted from) a naive datetime: that is for the gates to catch, on purpose.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import ScopeProvider

from fleet.campaigns.codemods._base import ScopedCodemodCommand

__all__ = ["ReplaceUtcnowCommand"]

_UTCNOW = "datetime.datetime.utcnow"
_FROMTS = "datetime.datetime.utcfromtimestamp"


class ReplaceUtcnowCommand(ScopedCodemodCommand):
    """``X.utcnow()`` -> ``X.now(UTC)`` and ``X.utcfromtimestamp(t)`` -> ``X.fromtimestamp(t,
    UTC)`` wherever ``X`` is ``datetime.datetime`` (``import datetime [as dt]``, ``from datetime
    import datetime [as DT]``); adds ``from datetime import UTC``. A module where ``UTC`` names
    something else is left alone."""

    DESCRIPTION = "Replace naive datetime.utcnow() by timezone-aware datetime.now(UTC)."
    EDITS_IMPORTS = True
    METADATA_DEPENDENCIES = (*ScopedCodemodCommand.METADATA_DEPENDENCIES, ScopeProvider)

    def visit_Module(self, node: cst.Module) -> bool:
        scope = self.get_metadata(ScopeProvider, node, None)
        self.utc_taken = False
        if scope is not None and "UTC" in scope:
            for assignment in scope["UTC"]:
                names = {q.name for q in scope.get_qualified_names_for(assignment.name)}
                if "datetime.UTC" not in names:
                    self.utc_taken = True
        return True

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if not isinstance(func, cst.Attribute) or self.utc_taken:
            return updated_node
        target = self.refers_to(original_node.func, (_UTCNOW, _FROMTS))
        if target is None or not self.in_scope(original_node):
            return updated_node
        if target == _UTCNOW:
            if updated_node.args:
                return updated_node
            new_attr, args = "now", [cst.Arg(cst.Name("UTC"))]
        else:
            if len(updated_node.args) != 1 or updated_node.args[0].keyword is not None:
                return updated_node
            first = updated_node.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new_attr, args = "fromtimestamp", [first, cst.Arg(cst.Name("UTC"))]
        AddImportsVisitor.add_needed_import(self.context, "datetime", "UTC")
        self.changes += 1
        return updated_node.with_changes(
            func=func.with_changes(attr=cst.Name(new_attr)), args=args
        )
