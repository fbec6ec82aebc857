"""A module one side stopped importing names from, moving them to a module beside it, while the
other side adds a name imported from it (the eighteenth unseen set, 6 Dec 2026).

- fastapi ``bbcc7cafa6b5``, ``fastapi/_compat/__init__.py``: theirs deleted ``_compat/main.py``
  and rewrote its 29 re-exports ``from .main import X as X`` as ``from .v2 import ...``; ours
  added three more ``from .main import ...``; the clean merge kept them, and ``import fastapi``
  failed (the humans imported them from ``.v2``);
- poetry ``56564f4694f2`` (found when the rule was run over the earlier sets' clean results):
  theirs imported ``argument`` from ``cleo.helpers`` instead of ``cleo`` (cleo 1.0), ours added
  ``from cleo import option``; the humans wrote ``from cleo.helpers import option``.

A base module counts as moved away from on a side when the side still imports at least half of
the names base imports from it, each now from another module of the same package (the same
top-level package, or the same level of a relative import), and nothing from it any more
(python-telegram-bot ``0f63d4ad607d``, where ours kept ``constants`` from ``telegram`` while
moving two names to submodules and theirs added ``MenuButton`` from ``telegram``, a circular
import, is not found: read so, it also fires on a sympy test that imports a new function from
``sympy`` beside others moved to ``sympy.functions``, a right merge). The file
conflicts when the result imports a name from such a module that base does not import and only
the other side added. Imports under ``if TYPE_CHECKING:`` and inside functions are not read.

A module of the project (not the standard library's, which stays importable) also counts as
moved away from when the side imports every name base imports from it that the side still
imports from modules of other packages, and nothing from it (certbot ``5befc4f790c9``, the
twentieth unseen set: ours moved every ``from acme.magic_typing import ...`` to ``typing``,
the module now warning on import and the tests turning warnings into errors; theirs added
``Optional`` from it in four files, kept by the clean merges; the humans imported it from
``typing``).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict

__all__ = ["source_retired"]

_STDLIB = frozenset(sys.stdlib_module_names)


def _imports(tree: ast.Module) -> dict[str, str]:
    """Name bound -> module, of each run-time ``from M import N`` at module level (inside ``if``
    and ``try`` too, not under ``if TYPE_CHECKING:``), a relative module with its dots."""
    out: dict[str, str] = {}

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name != "*":
                        out[alias.asname or alias.name] = module
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.dump(node.test):
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                for handler in node.handlers:
                    walk(handler.body)
                walk(node.orelse)
                walk(node.finalbody)

    walk(tree.body)
    return out


def _package(module: str) -> str:
    """The dots of a relative module, the top-level package of an absolute one."""
    if module.startswith("."):
        return module[: len(module) - len(module.lstrip("."))]
    return module.split(".")[0]


def _moved_from(base: dict[str, str], side: dict[str, str]) -> set[str]:
    by_module: dict[str, list[str]] = defaultdict(list)
    for name, module in base.items():
        if name in side:
            by_module[module].append(name)
    moved = set()
    for module, names in by_module.items():
        if module in side.values():
            continue
        package = _package(module)
        away = [n for n in names if side[n] != module and _package(side[n]) == package]
        if away and 2 * len(away) >= len(names):
            moved.add(module)
        elif package not in _STDLIB and not package.startswith(".") and all(
            _package(side[n]) != package for n in names
        ):
            moved.add(module)  # out of the project's module into another package: every name
    return moved


def source_retired(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result."""
    base, ours, theirs, merged = (_imports(tree) for tree in trees)
    for side, other in ((ours, theirs), (theirs, ours)):
        moved = _moved_from(base, side)
        for name, module in other.items():
            if name not in base and module in moved and merged.get(name) == module:
                return (
                    f"{name} is imported from {module}, which the other side's imports moved "
                    f"away from"
                )
    return None
