"""``RetireApiCommand``: every call of an old qualified callable becomes a call of a new one.

Arguments are mapped by name: the call is bound to ``old_params`` (the old positional parameter
names, in order), the names listed in ``new_positional`` are passed positionally in that order,
everything else by keyword, renamed through ``rename`` (a ``None`` target drops the argument).
A call with ``*args``/``**kwargs`` or more positional arguments than ``old_params`` cannot be
bound and is left for an agent (recorded in ``context.warnings``). Imports are fixed: an import
of the old name whose every use was rewritten is repointed (or removed), the new name is imported
when it is not reachable already.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import Assignment, Scope, ScopeProvider

from fleet.campaigns.codemods._base import ScopedCodemodCommand, dotted_name

__all__ = ["RetireApiCommand", "remap_arguments"]


def remap_arguments(
    args: Sequence[cst.Arg],
    old_params: Sequence[str],
    new_positional: Sequence[str],
    rename: Mapping[str, str | None],
) -> list[cst.Arg] | None:
    """The argument list for the new callable, or ``None`` when the call cannot be bound."""
    if not old_params and not new_positional:
        bound: list[tuple[str | None, cst.Arg]] = [
            (a.keyword.value if a.keyword else None, a) for a in args
        ]
    else:
        bound = []
        for index, arg in enumerate(args):
            if arg.star:
                return None
            if arg.keyword is None:
                if index >= len(old_params):
                    return None
                bound.append((old_params[index], arg))
            else:
                bound.append((arg.keyword.value, arg))
    by_name = {name: arg for name, arg in bound if name is not None}
    out: list[cst.Arg] = []
    for wanted in new_positional:
        if wanted in by_name:
            arg = by_name[wanted]
            out.append(arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
    for name, arg in bound:
        if name is not None and name in new_positional:
            continue
        if name is None:
            out.append(arg)
            continue
        target = rename.get(name, name)
        if target is None:
            continue
        equal = arg.equal if arg.keyword is not None else cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        )
        out.append(arg.with_changes(keyword=cst.Name(target), equal=equal))
    if not out:
        return out
    fresh = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    # Each argument keeps its own comma (it carries the argument's trailing comment); the last
    # argument takes the original call's last comma, swapping with the argument that had it.
    last_comma = args[-1].comma
    if out[-1] is not args[-1] and out[-1].comma is not last_comma:
        donor = next((i for i, a in enumerate(out) if a.comma is last_comma), None)
        own = out[-1].comma
        out[-1] = out[-1].with_changes(comma=last_comma)
        if donor is not None:
            out[donor] = out[donor].with_changes(comma=own)
    for index, arg in enumerate(out[:-1]):
        if not isinstance(arg.comma, cst.Comma):
            out[index] = arg.with_changes(comma=fresh)
    return out


class RetireApiCommand(ScopedCodemodCommand):
    """Replace calls of ``old`` (a dotted callable, resolved through imports and aliases) by
    ``new``, mapping the arguments."""

    DESCRIPTION = "Retire a deprecated callable: rewrite its call sites to the new API."
    EDITS_IMPORTS = True
    METADATA_DEPENDENCIES = (*ScopedCodemodCommand.METADATA_DEPENDENCIES, ScopeProvider)

    def __init__(
        self,
        context: CodemodContext,
        old: str,
        new: str,
        old_params: Sequence[str] = (),
        new_positional: Sequence[str] = (),
        rename: Mapping[str, str | None] | None = None,
        spans: Iterable[Sequence[int]] | None = None,
    ) -> None:
        super().__init__(context, spans)
        self.old, self.new = old, new
        self.old_params = tuple(old_params)
        self.new_positional = tuple(new_positional)
        self.rename = dict(rename or {})
        self.new_module, _, self.new_name = new.rpartition(".")

    # -- pre-scan: which calls are rewritten, and what the new callable is called here ---------

    def visit_Module(self, node: cst.Module) -> bool:
        self.targets: dict[cst.Call, list[cst.Arg]] = {}
        for call in m.findall(node, m.Call()):
            assert isinstance(call, cst.Call)
            if self.refers_to(call.func, (self.old,)) is None or not self.in_scope(call):
                continue
            args = remap_arguments(call.args, self.old_params, self.new_positional, self.rename)
            if args is None:
                self.warn(f"cannot bind the arguments of a call of {self.old}; left as is")
                continue
            self.targets[call] = args
        rewritten = {id(c.func) for c in self.targets}
        self.local_of: dict[str, str] = {}  # dotted target -> local name, from module imports
        self.freed: set[str] = set()  # local names bound to old whose every use is rewritten
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is None:
            return True
        for name, assignments in _module_bindings(scope):
            for assignment in assignments:
                for qname in scope.get_qualified_names_for(assignment.name):
                    target = self._absolute(qname.name) if qname.name.startswith(".") else (
                        qname.name
                    )
                    self.local_of.setdefault(target, name)
                    if target == self.old and all(
                        id(access.node) in rewritten for access in assignment.references
                    ):
                        self.freed.add(name)
        return True

    def _new_func(self) -> cst.BaseExpression:
        if self.new in self.local_of:
            return cst.parse_expression(self.local_of[self.new])
        if self.new_module in self.local_of:
            return cst.parse_expression(f"{self.local_of[self.new_module]}.{self.new_name}")
        bound = set(self.local_of.values())
        if self.new_name not in bound or self.new_name in self.freed:
            AddImportsVisitor.add_needed_import(self.context, self.new_module, self.new_name)
            return cst.Name(self.new_name)
        alias = f"{self.new_module.rsplit('.', 1)[-1]}_{self.new_name}"
        AddImportsVisitor.add_needed_import(self.context, self.new_module, self.new_name, alias)
        return cst.Name(alias)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        args = self.targets.get(original_node)
        if args is None:
            return updated_node
        self.changes += 1
        old_func = dotted_name(original_node.func)
        if old_func is not None and "." in old_func:  # legacy.charge: maybe `legacy` is unused now
            head = old_func.split(".", 1)[0]
            module = self.old.rpartition(".")[0]
            parent, _, leaf = module.rpartition(".")
            if old_func.count(".") == 1:
                alias = None if head == leaf else head
                if parent:
                    RemoveImportsVisitor.remove_unused_import(self.context, parent, leaf, alias)
                RemoveImportsVisitor.remove_unused_import(self.context, module, asname=head)
            else:
                RemoveImportsVisitor.remove_unused_import(self.context, module)
        return updated_node.with_changes(func=self._new_func(), args=args)

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.ImportFrom | cst.RemovalSentinel:
        if not self.freed or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        keep = [
            a for a in updated_node.names
            if not (_local(a) in self.freed and a.evaluated_name == self.old.rsplit(".", 1)[1])
        ]
        if len(keep) == len(updated_node.names):
            return updated_node
        if not keep:
            if len(updated_node.names) == 1 and self.new_name == self.old.rsplit(".", 1)[1]:
                # repoint in place: `from old.mod import f` -> `from new.mod import f`
                self.local_of[self.new] = _local(updated_node.names[0])
                return updated_node.with_changes(
                    module=cst.parse_expression(self.new_module), relative=()
                )
            return cst.RemoveFromParent()
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(names=keep)


def _local(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return alias.evaluated_name


def _module_bindings(scope: Scope) -> list[tuple[str, list[Assignment]]]:
    assignments = getattr(scope, "assignments", None)
    if assignments is None:
        return []
    grouped: dict[str, list[Assignment]] = {}
    for assignment in assignments:
        if isinstance(assignment, Assignment) and isinstance(
            assignment.node, cst.Import | cst.ImportFrom
        ):
            grouped.setdefault(assignment.name, []).append(assignment)
    return sorted(grouped.items())
