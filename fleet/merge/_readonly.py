"""A write into an attribute the result binds to a read-only ``MappingProxyType``.

python-telegram-bot ``d6e49e8a6bb2`` (``telegram/ext/dispatcher.py``), eighteenth unseen set:
theirs made ``self.chat_data = MappingProxyType(self._chat_data)`` (writes going through
``self._chat_data``); ours added ``migrate_chat_data``, which writes
``self.chat_data[new] = self.chat_data[old]`` and ``del self.chat_data[old]``; the merge kept
both, and every migration raised ``TypeError: 'mappingproxy' object does not support item
assignment``. A class of the result whose methods bind ``self.X`` to a ``MappingProxyType(...)``
and also store into or delete from ``self.X[...]``, where no input's class did both, is unsure.
"""

from __future__ import annotations

import ast

from fleet.merge import _parsed

__all__ = ["proxy_written"]


def _self_attribute(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else None
    return None


def _written_proxies(tree: ast.Module) -> set[tuple[str, str]]:
    """(class, attribute) pairs whose methods both make ``self.attribute`` a mapping proxy and
    write into it by subscript."""
    found: set[tuple[str, str]] = set()
    for cls in _parsed.of(_parsed.nodes(tree), ast.ClassDef):
        proxies: set[str] = set()
        written: set[str] = set()
        for stmt in cls.body:
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(
                    node.value, ast.Call
                ):
                    callee = _parsed.dotted(node.value.func) or ""
                    if callee.rsplit(".", 1)[-1] == "MappingProxyType":
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        proxies.update(
                            name for target in targets
                            if (name := _self_attribute(target)) is not None
                        )
                elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
                    name = _self_attribute(node.value)
                    if name is not None:
                        written.add(name)
        found.update((cls.name, name) for name in proxies & written)
    return found


def proxy_written(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    if not any("MappingProxyType" in {n.attr for n in _parsed.of(_parsed.nodes(t), ast.Attribute)}
               | {n.id for n in _parsed.of(_parsed.nodes(t), ast.Name)} for t in trees[1:3]):
        return None
    new = _written_proxies(trees[3]) - set().union(*(_written_proxies(t) for t in trees[:3]))
    if new:
        cls, name = sorted(new)[0]
        return f"{cls}.{name} is a read-only MappingProxyType the result writes into"
    return None
