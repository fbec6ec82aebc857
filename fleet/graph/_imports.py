"""Import readers: one per language, turning an ``@import`` node into bindings.

A binding is ``(local, target, node)``: ``local`` is the name bound in the file (``None`` for a
star import), ``target`` the dotted (Python) or path-like (JS/TS/Go) name it stands for.
Relative Python imports are made absolute with the file's package.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

import tree_sitter as ts

__all__ = ["READERS", "Binding", "go_imports", "js_imports", "python_imports"]

Binding = tuple[str | None, str, ts.Node]


def _text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _absolute(prefix_dots: int, rest: str, package: str) -> str:
    parts = package.split(".") if package else []
    if prefix_dots > 1:
        parts = parts[: len(parts) - (prefix_dots - 1)] if prefix_dots - 1 <= len(parts) else []
    if rest:
        parts.append(rest)
    return ".".join(parts)


def python_imports(node: ts.Node, path: str, package: str) -> list[Binding]:
    out: list[Binding] = []
    if node.type == "import_statement":
        for child in node.named_children:
            if child.type == "dotted_name":
                dotted = _text(child)
                head = dotted.split(".", 1)[0]
                out.append((head, head, child))
                if dotted != head:  # `import a.b` also makes `a.b` reachable
                    out.append((None, dotted, child))
            elif child.type == "aliased_import":
                name, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
                if name is not None and alias is not None:
                    out.append((_text(alias), _text(name), child))
        return out
    module = node.child_by_field_name("module_name")
    if module is None:
        return out
    if module.type == "relative_import":
        dots, rest = 0, ""
        for part in module.named_children:
            if part.type == "import_prefix":
                dots = _text(part).count(".")
            elif part.type == "dotted_name":
                rest = _text(part)
        base = _absolute(dots, rest, package)
    else:
        base = _text(module)
    for child in node.children_by_field_name("name"):
        if child.type == "dotted_name":
            dotted = _text(child)
            out.append((dotted.rsplit(".", 1)[-1], f"{base}.{dotted}" if base else dotted, child))
        elif child.type == "aliased_import":
            name_node, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
            if name_node is not None and alias is not None:
                dotted = _text(name_node)
                out.append((_text(alias), f"{base}.{dotted}" if base else dotted, child))
    for child in node.named_children:
        if child.type == "wildcard_import":
            out.append((None, base + ".*", child))
    return out


def _js_source(spec: str, path: str) -> str:
    if spec.startswith("."):
        return posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    return spec


def js_imports(node: ts.Node, path: str, package: str) -> list[Binding]:
    source = node.child_by_field_name("source")
    if source is None:
        return []
    target = _js_source(_text(source).strip("'\"`"), path)
    out: list[Binding] = [(None, target, source)]
    stack = [node]
    while stack:  # iterative: the clause is small but nested (named_imports > import_specifier)
        cur = stack.pop()
        for child in cur.named_children:
            if child.type == "import_specifier":
                name, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
                if name is not None:
                    local = alias if alias is not None else name
                    out.append((_text(local), f"{target}.{_text(name)}", child))
            elif child.type == "namespace_import":
                ident = next((c for c in child.named_children if c.type == "identifier"), None)
                if ident is not None:
                    out.append((_text(ident), target, child))
            elif child.type == "identifier" and cur.type == "import_clause":
                out.append((_text(child), f"{target}.default", child))
            elif child.type in ("import_clause", "named_imports"):
                stack.append(child)
    return out


def go_imports(node: ts.Node, path: str, package: str) -> list[Binding]:
    out: list[Binding] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        for child in cur.named_children:
            if child.type == "import_spec":
                spec_path = child.child_by_field_name("path")
                if spec_path is None:
                    continue
                target = _text(spec_path).strip('"`')
                alias = child.child_by_field_name("name")
                local = _text(alias) if alias is not None else target.rsplit("/", 1)[-1]
                out.append((None if local in ("_", ".") else local, target, child))
            elif child.type == "import_spec_list":
                stack.append(child)
    return out


READERS: dict[str, Callable[[ts.Node, str, str], list[Binding]]] = {
    "python": python_imports,
    "javascript": js_imports,
    "typescript": js_imports,
    "go": go_imports,
}
