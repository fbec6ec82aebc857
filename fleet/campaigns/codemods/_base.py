"""The base of every built-in codemod: restriction to byte spans and import-aware name lookup.

A codemod built on :class:`ScopedCodemodCommand` rewrites only nodes that start inside one of the
``spans`` it was given (byte offsets into the UTF-8 source, end exclusive), so a work unit edits
exactly its own symbols; ``spans=None`` means the whole module. Imports the rewrite needs are
added (and imports it made unused are removed) at module level, outside the spans, by LibCST's
``AddImportsVisitor``/``RemoveImportsVisitor``, each name added to an existing ``from`` import
put in the statement's order (:mod:`._import_order`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
from libcst.metadata import ByteSpanPositionProvider, ProviderT, QualifiedNameProvider

from fleet.campaigns.codemods._import_order import place_added_names

Span = tuple[int, int]

__all__ = ["ScopedCodemodCommand", "Span", "dotted_name", "module_names"]


def module_names(path: str) -> tuple[str, str]:
    """``(full_module_name, full_package_name)`` of a repository-relative ``.py`` path."""
    parts = [p for p in path.removesuffix(".py").split("/") if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else ``None``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


class ScopedCodemodCommand(VisitorBasedCodemodCommand):
    """A visitor codemod that only rewrites nodes starting inside ``spans``."""

    METADATA_DEPENDENCIES: ClassVar[tuple[ProviderT, ...]] = (
        ByteSpanPositionProvider,
        QualifiedNameProvider,
    )
    #: True when the rewrite may add, repoint or remove module-level imports (code outside the
    #: unit's symbols): the planner then gives each unit the write lease on ``path::<module>`` of
    #: every file it edits and keeps a file's findings in one unit (see ``fleet.plan``).
    EDITS_IMPORTS: ClassVar[bool] = False

    def __init__(self, context: CodemodContext, spans: Iterable[Sequence[int]] | None = None):
        super().__init__(context)
        self.spans: tuple[Span, ...] | None = (
            None if spans is None else tuple(sorted((int(s[0]), int(s[1])) for s in spans))
        )
        self.changes = 0

    def transform_module(self, tree: cst.Module) -> cst.Module:
        """The rewrite, then the imports it needs and no longer needs (LibCST), each name it
        added to an existing ``from`` import put where the statement's order puts it
        (:mod:`._import_order`)."""
        return place_added_names(tree, super().transform_module(tree))

    def in_scope(self, node: cst.CSTNode) -> bool:
        if self.spans is None:
            return True
        span = self.get_metadata(ByteSpanPositionProvider, node, None)
        if span is None:
            return False
        return any(start <= span.start < end for start, end in self.spans)

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """Fully qualified names ``node`` may refer to, with relative imports made absolute."""
        names = self.get_metadata(QualifiedNameProvider, node, set())
        out: set[str] = set()
        for qname in names:
            name = qname.name
            if name.startswith("."):
                name = self._absolute(name)
            out.add(name)
        return out

    def _absolute(self, name: str) -> str:
        level = len(name) - len(name.lstrip("."))
        package = (self.context.full_package_name or "").split(".") if self.context else []
        package = [p for p in package if p]
        base = package[: len(package) - (level - 1)] if level > 1 else package
        rest = name[level:]
        return ".".join([*base, rest]) if rest else ".".join(base)

    def refers_to(self, node: cst.CSTNode, targets: Iterable[str]) -> str | None:
        """The first of ``targets`` that ``node`` refers to, or ``None``."""
        names = self.qualified_names(node)
        for target in targets:
            if target in names:
                return target
        return None
