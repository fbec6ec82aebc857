"""``ReplaceUtcnowCommand``: ``datetime.utcnow()`` -> ``datetime.now(UTC)`` (or
``datetime.now(timezone.utc)`` for a target that supports a Python older than 3.11, where
``datetime.UTC`` does not exist).

The rewrite turns naive values into aware ones, which changes behaviour where the result is
compared with (or subtracted from) a naive datetime: that is for the gates to catch, on purpose.
With ``keep_naive: true`` in the campaign's ``fix.params`` the result is made naive again
(``datetime.now(UTC).replace(tzinfo=None)``): the exact value ``utcnow()`` returned, without the
deprecated call, for code whose naive datetimes cannot change at once (WebOb 1.8.7's
``set_cookie`` and croniter 1.3.8's pytz ``localize``: their tests reject the aware values).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import GlobalScope, ScopeProvider

from fleet.campaigns.codemods._base import ScopedCodemodCommand, dotted_name

__all__ = ["ReplaceUtcnowCommand"]

_UTCNOW = "datetime.datetime.utcnow"
_FROMTS = "datetime.datetime.utcfromtimestamp"


class ReplaceUtcnowCommand(ScopedCodemodCommand):
    """``X.utcnow()`` -> ``X.now(UTC)`` and ``X.utcfromtimestamp(t)`` -> ``X.fromtimestamp(t,
    UTC)`` wherever ``X`` is ``datetime.datetime`` (``import datetime [as dt]``, ``from datetime
    import datetime [as DT]``); adds ``from datetime import UTC``. A module where ``UTC`` names
    something else is left alone.

    ``min_python`` (``"3.6"``: the oldest Python the target supports, see
    :func:`fleet.campaigns.codemods.target_params`) below 3.11 spells it ``timezone.utc`` with
    ``from datetime import timezone`` - or ``datetime.timezone.utc`` (no import) where the module
    is imported as ``datetime``; a module where ``timezone`` names something else (Django's
    ``django.utils.timezone``) and ``datetime`` is not the module is then left alone.

    ``keep_naive`` (default false) appends ``.replace(tzinfo=None)``: the same naive value."""

    DESCRIPTION = "Replace naive datetime.utcnow() by timezone-aware datetime.now(UTC)."
    EDITS_IMPORTS = True
    METADATA_DEPENDENCIES = (*ScopedCodemodCommand.METADATA_DEPENDENCIES, ScopeProvider)

    def __init__(self, context: CodemodContext, spans: Iterable[Sequence[int]] | None = None,
                 min_python: str | None = None, keep_naive: bool = False) -> None:
        super().__init__(context, spans)
        if not isinstance(keep_naive, bool):
            raise TypeError(f"keep_naive must be true or false, not {keep_naive!r}")
        self.keep_naive = keep_naive
        self.legacy = min_python is not None and _version(min_python) < (3, 11)
        self.utc_name = "timezone" if self.legacy else "UTC"

    def visit_Module(self, node: cst.Module) -> bool:
        scope = self.get_metadata(ScopeProvider, node, None)
        self.utc_taken = False
        # `real_datetime = datetime.datetime` at module level: alias target node -> its value
        self.aliases: dict[cst.Name, cst.BaseExpression] = {}
        for stmt in node.body:
            if m.matches(stmt, m.SimpleStatementLine([m.Assign(
                    [m.AssignTarget(m.Name())], m.Name() | m.Attribute())])):
                assert isinstance(stmt, cst.SimpleStatementLine)
                assign = stmt.body[0]
                assert isinstance(assign, cst.Assign)
                target = assign.targets[0].target
                assert isinstance(target, cst.Name)
                if dotted_name(assign.value) is not None:
                    self.aliases[target] = assign.value
        self.module_alias: str | None = None  # `import datetime`: datetime.timezone.utc
        name = self.utc_name
        if scope is not None and name in scope:
            for assignment in scope[name]:
                names = {q.name for q in scope.get_qualified_names_for(assignment.name)}
                if f"datetime.{name}" not in names:
                    self.utc_taken = True
        if self.legacy and scope is not None and "datetime" in scope:
            for assignment in scope["datetime"]:
                names = {q.name for q in scope.get_qualified_names_for(assignment.name)}
                if names == {"datetime"}:
                    self.module_alias = "datetime"
        return True

    def _utc(self) -> cst.BaseExpression:
        """The aware-UTC argument in the spelling the target's oldest Python has."""
        if not self.legacy:
            AddImportsVisitor.add_needed_import(self.context, "datetime", "UTC")
            return cst.Name("UTC")
        if self.module_alias is not None:  # no import to add
            return cst.parse_expression(f"{self.module_alias}.timezone.utc")
        AddImportsVisitor.add_needed_import(self.context, "datetime", "timezone")
        return cst.parse_expression("timezone.utc")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        if not isinstance(func, cst.Attribute) or (self.utc_taken and self.module_alias is None):
            return updated_node
        target = self.refers_to(original_node.func, (_UTCNOW, _FROMTS)) or self._via_alias(
            original_node.func)
        if target is None or not self.in_scope(original_node):
            return updated_node
        if target == _UTCNOW:
            if updated_node.args:
                return updated_node
            new_attr, args = "now", [cst.Arg(self._utc())]
        else:
            if len(updated_node.args) != 1 or updated_node.args[0].keyword is not None:
                return updated_node
            first = updated_node.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new_attr, args = "fromtimestamp", [first, cst.Arg(self._utc())]
        self.changes += 1
        call = updated_node.with_changes(func=func.with_changes(attr=cst.Name(new_attr)),
                                         args=args)
        if not self.keep_naive:
            return call
        # the call's own parentheses, if any, go around the whole expression
        inner = call.with_changes(lpar=[], rpar=[])
        return cst.Call(func=cst.Attribute(value=inner, attr=cst.Name("replace")),
                        args=[cst.Arg(cst.Name("None"), keyword=cst.Name("tzinfo"),
                                      equal=cst.AssignEqual(
                                          whitespace_before=cst.SimpleWhitespace(""),
                                          whitespace_after=cst.SimpleWhitespace("")))],
                        lpar=call.lpar, rpar=call.rpar)

    def _via_alias(self, func: cst.BaseExpression) -> str | None:
        """``alias.utcnow`` where ``alias`` is bound once, at module level, to a dotted name
        that is ``datetime.datetime`` (freezegun's ``real_datetime = datetime.datetime``)."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        scope = self.get_metadata(ScopeProvider, func.value, None)
        if scope is None or func.value.value not in scope:
            return None
        assignments = list(scope[func.value.value])
        if len(assignments) != 1 or not isinstance(assignments[0].scope, GlobalScope):
            return None
        node = getattr(assignments[0], "node", None)
        value = self.aliases.get(node) if isinstance(node, cst.Name) else None
        if value is None or "datetime.datetime" not in self.qualified_names(value):
            return None
        name = f"datetime.datetime.{func.attr.value}"
        return name if name in (_UTCNOW, _FROMTS) else None


def _version(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)
