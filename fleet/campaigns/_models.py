"""The ``where: {models: [...]}`` filter: a site counts only where one of those classes is involved.

``models`` names base classes by qualified name (``pydantic.BaseModel``). What the symbol graph
can tell, most precise first:

- a class body (``class Config`` inside ``class M(...)``): ``M`` must derive from a model - its
  base list, followed through the repository's classes, reaches one of the names (a base outside
  the repository is known by its qualified name only, so ``BaseSettings`` is not a model);
- ``x.m`` / ``x.m()`` whose receiver the graph resolved: to a repository class (``self`` in a
  method, ``x = M(...)``, ``x: M``, ``M.parse_obj``) - it must derive from a model; to a
  repository function or module - never; to a builtin - never; to an external name under one of
  the names (``pydantic.BaseModel.json``) - always; to another external name - as below (an
  installed package's class may be a model: the graph cannot see into it);
- a receiver the graph cannot type (``body.dict()``, ``f().json()``): the file must use a model
  (some reference in it resolves to a model class or to one of the names).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

if TYPE_CHECKING:
    from fleet.graph import Reference, SymbolGraph

__all__ = ["ModelFilter"]


class ModelFilter:
    """Answers "is a model involved here?" for one graph and one set of model base names."""

    def __init__(self, graph: SymbolGraph, models: list[str] | tuple[str, ...]) -> None:
        self.graph = graph
        self.models = frozenset(models)
        self._bases: dict[str, dict[str, list[Reference]]] = {}  # path -> class -> inherit refs
        self._is_model: dict[str, bool] = {}
        self._file_uses: dict[str, bool] = {}
        self._at: dict[str, dict[int, Reference]] = {}  # path -> start byte -> attribute ref

    def _named(self, name: str | None) -> bool:
        return name is not None and (
            name in self.models or any(name.startswith(m + ".") for m in self.models))

    def _qualified(self, ref: Reference) -> str | None:
        """The qualified name a reference denotes (the graph's resolution when exact, else the
        file's module-level import of its head)."""
        graph = self.graph
        if ref.exact and ref.target is not None:
            if "::" not in ref.target:
                return ref.target
            return graph.dotted(ref.target) if ref.target in graph.symbols else None
        head, _, rest = ref.name.partition(".")
        imported = graph.imports.get(ref.path, {}).get(head)
        if imported is None:
            return None
        return f"{imported}.{rest}" if rest else imported

    def derives(self, class_id: str) -> bool:
        """``class_id`` is a model class: it or a class up its base lists is named in
        ``models``."""
        found = self._is_model.get(class_id)
        if found is not None:
            return found
        graph = self.graph
        seen: set[str] = set()
        stack = [class_id]
        found = False
        while stack and not found:  # iterative: base lists may form cycles in broken code
            cls = stack.pop()
            if cls in seen or cls not in graph.symbols:
                continue
            seen.add(cls)
            if graph.dotted(cls) in self.models or self._is_model.get(cls):
                found = True
                break
            for ref in self._inherit_refs(cls):
                if ref.exact and ref.target is not None and "::" in ref.target:
                    stack.append(ref.target)
                elif self._qualified(ref) in self.models:
                    found = True
                    break
        self._is_model[class_id] = found
        return found

    def _inherit_refs(self, class_id: str) -> list[Reference]:
        path = class_id.split("::", 1)[0]
        by_class = self._bases.get(path)
        if by_class is None:
            by_class = self._bases[path] = {}
            for ref in self.graph.references_in(path):
                if ref.kind == "inherit":
                    by_class.setdefault(ref.src, []).append(ref)
        return by_class.get(class_id, [])

    def file_uses_models(self, path: str) -> bool:
        found = self._file_uses.get(path)
        if found is None:
            found = False
            for ref in self.graph.references_in(path):
                target = ref.target
                if target is not None and "::" in target:
                    sym = self.graph.symbols.get(target)
                    if sym is not None and sym.kind == "class" and self.derives(target):
                        found = True
                        break
                elif ref.kind != "import" and self._named(self._qualified(ref)):
                    found = True
                    break
            self._file_uses[path] = found
        return found

    def receiver_ok(self, ref: Reference) -> bool:
        """``ref`` (``x.m``) is a member of a model by the graph's resolution, or of an untyped
        receiver in a file that uses models."""
        target = ref.target
        if target is not None and "::" in target:
            sym = self.graph.symbols.get(target)
            if sym is not None:
                parts = ref.name.split(".")
                if sym.kind == "class" and not ref.exact and (
                        len(parts) == 2 or parts[-2] == sym.name):  # `x.m` stopped at x's class
                    return self.derives(target)
                if ref.exact:  # the repository defines `m`: on x's class, or x is no object
                    parent = self.graph.symbols.get(sym.parent) if sym.parent else None
                    return parent is not None and parent.kind == "class" and self.derives(
                        parent.id)
        elif target is not None:
            if target.startswith("builtins."):
                return False
            if self._named(target) or self._named(self._qualified(ref)):
                return True
            # an external class may be a model defined in another package: judge by the file
        return self.file_uses_models(ref.path)

    def node_ok(self, path: str, node: ts.Node) -> bool:
        """A query match: a class definition (or a statement of a class body: a field) is judged
        by the class whose body holds it; a call ``x.m(...)`` (or the attribute ``x.m``) by its
        receiver; anything else by its file."""
        if node.type in ("class_definition", "expression_statement"):
            outer = node.parent
            while outer is not None and outer.type != "class_definition":
                if outer.type == "function_definition":
                    return False  # a class nested in a function: no model body
                outer = outer.parent
            if outer is None:
                return False
            name = outer.child_by_field_name("name")
            sym = self.graph.enclosing(path, name.start_byte) if name is not None else None
            return sym is not None and sym.kind == "class" and self.derives(sym.id)
        attr = node.child_by_field_name("function") if node.type == "call" else node
        if attr is not None and attr.type == "attribute":
            ref = self._ref_at(path, attr.start_byte, attr.end_byte)
            if ref is not None:
                return self.receiver_ok(ref)
        return self.file_uses_models(path)

    def _ref_at(self, path: str, start: int, end: int) -> Reference | None:
        refs = self._at.get(path)
        if refs is None:
            refs = self._at[path] = {}
            for ref in self.graph.references_in(path):
                if "." in ref.name and ref.kind in ("attribute", "call"):
                    refs.setdefault(ref.start_byte, ref)
        found = refs.get(start)
        return found if found is not None and found.end_byte == end else None
