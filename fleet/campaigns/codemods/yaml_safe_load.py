"""``ReplaceYamlLoadCommand``: ``yaml.load(stream)`` without a Loader -> ``yaml.safe_load``."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from fleet.campaigns.codemods._base import ScopedCodemodCommand

__all__ = ["ReplaceYamlLoadCommand"]

_SAFE = {"yaml.load": "safe_load", "yaml.load_all": "safe_load_all"}


def _has_loader(call: cst.Call) -> bool:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) > 1 or any(a.star for a in call.args):
        return True  # a positional Loader, or *args/**kwargs that may carry one
    return any(a.keyword is not None and a.keyword.value == "Loader" for a in call.args)


class ReplaceYamlLoadCommand(ScopedCodemodCommand):
    """Calls of ``yaml.load``/``yaml.load_all`` (however imported) that pass no Loader become
    ``safe_load``/``safe_load_all``; calls that give a Loader are left alone."""

    DESCRIPTION = "Replace yaml.load without a Loader by yaml.safe_load."
    EDITS_IMPORTS = True

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        target = self.refers_to(original_node.func, _SAFE)
        if target is None or _has_loader(original_node) or not self.in_scope(original_node):
            return updated_node
        safe = _SAFE[target]
        func = updated_node.func
        self.changes += 1
        if isinstance(func, cst.Attribute):
            return updated_node.with_changes(func=func.with_changes(attr=cst.Name(safe)))
        if isinstance(func, cst.Name):  # from yaml import load [as x]
            AddImportsVisitor.add_needed_import(self.context, "yaml", safe)
            RemoveImportsVisitor.remove_unused_import(
                self.context, "yaml", target.rsplit(".", 1)[1], asname=_asname(func, target)
            )
            return updated_node.with_changes(func=cst.Name(safe))
        return updated_node


def _asname(func: cst.Name, target: str) -> str | None:
    return None if func.value == target.rsplit(".", 1)[1] else func.value
