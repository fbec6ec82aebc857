"""A whole-result check: a class the result leaves abstract (an ``@abstractmethod`` member it
inherits from a class of the file and implements nowhere on the way) where every input that has
the class has it concrete (mitmproxy ``4791fbd906b1``, ``mitmproxy/proxy/mode_servers.py``: one
side moved the abstract property ``log_desc`` up into the base class and added a use of it, the
other side removed ``log_desc`` everywhere, the abstract property and every subclass's value;
the merge kept the moved abstract property and the removals, so no server class could be
instantiated any more: a ``TypeError`` no input has). The file conflicts.

Only classes defined once in the module (also inside a module-level ``if``/``try``) are looked
at, their bases by name (``Base`` or ``Base[T]``). A class with a base from elsewhere (other than
``object``, ``ABC``, ``Generic``, ``Protocol``) may inherit any member from it, so nothing is
said of it: it is neither abstract nor concrete here."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

__all__ = ["abstract_made", "base_name", "defined_once"]

_NEUTRAL = frozenset({"object", "ABC", "Generic", "Protocol"})


def _classes(body: list[ast.stmt]) -> Iterator[ast.ClassDef]:
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from _classes(stmt.body)
            yield from _classes(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse):
                yield from _classes(part)


def defined_once(tree: ast.Module) -> dict[str, ast.ClassDef]:
    found = list(_classes(tree.body))
    count = Counter(node.name for node in found)
    return {node.name: node for node in found if count[node.name] == 1}


def base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr if node.attr in _NEUTRAL else None
    return None


def _abstract_decorated(node: ast.stmt) -> bool:
    decorators = getattr(node, "decorator_list", [])
    for decorator in decorators:
        name = decorator.attr if isinstance(decorator, ast.Attribute) else None
        name = decorator.id if isinstance(decorator, ast.Name) else name
        if name in ("abstractmethod", "abstractproperty"):
            return True
    return False


def _members(node: ast.ClassDef) -> dict[str, bool]:
    """The names a class body binds -> whether that binding is abstract (the last one counts)."""
    out: dict[str, bool] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[stmt.name] = _abstract_decorated(stmt)
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = False
        elif (
            isinstance(stmt, ast.AnnAssign)
            and stmt.value is not None
            and isinstance(stmt.target, ast.Name)
        ):
            out[stmt.target.id] = False
    return out


def _order(name: str, classes: dict[str, ast.ClassDef], seen: tuple[str, ...]) -> list[str] | None:
    """The class and its bases of the file, depth first and left to right (the first class that
    binds a name is the one the lookup finds, as in the MRO of single or disjoint inheritance);
    None when a base comes from elsewhere or the bases loop."""
    if name in seen:
        return None
    order = [name]
    for base in classes[name].bases:
        parent = base_name(base)
        if parent is None:
            return None
        if parent in _NEUTRAL:
            continue
        if parent not in classes:
            return None
        inherited = _order(parent, classes, (*seen, name))
        if inherited is None:
            return None
        order += [item for item in inherited if item not in order]
    return order


def _abstract(name: str, classes: dict[str, ast.ClassDef]) -> set[str] | None:
    """The abstract members class ``name`` is left with, or None when that cannot be told."""
    order = _order(name, classes, ())
    if order is None:
        return None
    members = [_members(classes[item]) for item in order]
    names = {member for bound in members for member, abstract in bound.items() if abstract}
    left = set()
    for member in names:
        first = next(bound[member] for bound in members if member in bound)
        if first:
            left.add(member)
    return left


def abstract_made(trees: list[ast.Module]) -> str | None:
    """Why the result (the last of base, ours, theirs, result) leaves a class abstract that every
    input having it has concrete, or None."""
    classes = [defined_once(tree) for tree in trees]
    for name in classes[3]:
        left = _abstract(name, classes[3])
        if not left:
            continue
        inputs = [_abstract(name, version) for version in classes[:3] if name in version]
        if inputs and all(members is not None for members in inputs):
            for member in sorted(left):
                if all(member not in members for members in inputs if members is not None):
                    return f"{name} is left with the abstract {member}, which no input leaves"
    return None
