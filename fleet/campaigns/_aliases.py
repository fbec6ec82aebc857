"""Module-level aliases: ``real_datetime = datetime.datetime`` makes ``real_datetime.utcnow()``
a call of ``datetime.datetime.utcnow`` (freezegun 0.3.9 ``api.py``).

Only the sound case counts: a module-level name bound exactly once in its module (no other
assignment, import, ``def``/``class``, loop or ``with`` target at module level, and no ``global``
statement for it anywhere in the file), by a plain assignment whose value is a dotted name (no
call, no subscript). The reference must resolve, by the graph's scoping, to that module-level
variable: a function's own local of the same name is no alias use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

if TYPE_CHECKING:
    from collections.abc import Callable

    from fleet.graph import Reference, SymbolGraph

__all__ = ["Aliases"]

_SCOPES = frozenset({"function_definition", "class_definition", "lambda"})
_BINDERS = """
(assignment left: (identifier) @n)
(assignment left: (pattern_list (identifier) @n))
(assignment left: (tuple_pattern (identifier) @n))
(augmented_assignment left: (identifier) @n)
(for_statement left: (identifier) @n)
(for_statement left: (pattern_list (identifier) @n))
(as_pattern_target (identifier) @n)
(named_expression name: (identifier) @n)
(function_definition name: (identifier) @n)
(class_definition name: (identifier) @n)
(aliased_import alias: (identifier) @n)
(import_statement name: (dotted_name . (identifier) @n))
(import_from_statement name: (dotted_name (identifier) @n))
(global_statement (identifier) @g)
"""


def _module_level(node: ts.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in _SCOPES:
            return False
        parent = parent.parent
    return True


class Aliases:
    """Qualifies ``alias.rest`` references; ``tree(path)`` gives a file's parsed source."""

    def __init__(self, graph: SymbolGraph, tree: Callable[[str], ts.Tree],
                 qualify: Callable[[SymbolGraph, Reference], str | None]) -> None:
        self.graph = graph
        self.tree = tree
        self.qualify = qualify
        self._query: ts.Query | None = None
        self._by_path: dict[str, dict[str, tuple[int, int]]] = {}  # name -> value span

    def _aliases(self, path: str) -> dict[str, tuple[int, int]]:
        found = self._by_path.get(path)
        if found is not None:
            return found
        root = self.tree(path).root_node
        if self._query is None:
            self._query = ts.Query(self.tree(path).language, _BINDERS)
        bindings: dict[str, list[ts.Node]] = {}
        declared_global: set[str] = set()
        for _, caps in ts.QueryCursor(self._query).matches(root):
            for node in caps.get("g", ()):
                declared_global.add((node.text or b"").decode())
            for node in caps.get("n", ()):
                if _module_level(node):
                    bindings.setdefault((node.text or b"").decode(), []).append(node)
        found = {}
        for name, nodes in bindings.items():
            if len(nodes) != 1 or name in declared_global:
                continue
            assign = nodes[0].parent
            if assign is None or assign.type != "assignment" or assign.child_by_field_name(
                    "type") is not None:
                continue
            value = assign.child_by_field_name("right")
            if value is not None and value.type in ("identifier", "attribute") and all(
                    c.type in ("identifier", "attribute", ".") for c in _walk(value)):
                found[name] = (value.start_byte, value.end_byte)
        self._by_path[path] = found
        return found

    def qualified(self, ref: Reference, depth: int = 0) -> str | None:
        """The qualified name of ``alias.rest`` when ``alias`` is a sound module-level alias."""
        head, _, rest = ref.name.partition(".")
        if depth > 4 or ref.target != f"{ref.path}::{head}":
            return None
        span = self._aliases(ref.path).get(head)
        if span is None:
            return None
        value = next((r for r in self.graph.references_in(ref.path)
                      if (r.start_byte, r.end_byte) == span), None)
        if value is None:
            return None
        base = self.qualify(self.graph, value) or self.qualified(value, depth + 1)
        if base is None or "::" in base:
            return None
        return f"{base}.{rest}" if rest else base


def _walk(node: ts.Node) -> list[ts.Node]:
    out, stack = [], [node]
    while stack:
        cur = stack.pop()
        out.append(cur)
        stack.extend(cur.children)
    return out
