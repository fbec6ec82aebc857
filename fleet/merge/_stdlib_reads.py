"""Reads through imported modules, for ``_migrated.access_retired``: which names an ``import``
binds to a standard-library module (a read through one is skipped: the old spelling likely still
works), whether such a read can work at all, and which names an ``import`` binds to any module
(a module's one function called once and renamed is no sign of a rename everywhere)."""

from __future__ import annotations

import ast
import sys

from fleet.merge import _parsed

__all__ = ["module_names", "never_there", "stdlib_names"]

_STDLIB = frozenset(sys.stdlib_module_names)


def stdlib_names(tree: ast.Module) -> dict[str, str]:
    """Each name an ``import`` of a standard-library module binds, with the module it names."""
    bound: dict[str, str] = {}
    for node in _parsed.of(_parsed.nodes(tree), ast.Import):
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top in _STDLIB:  # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``a.b``
                bound[alias.asname or top] = alias.name if alias.asname else top
    return bound


def never_there(module: str, key: str) -> bool:
    """Whether the read ``key`` (``os.join``) through the standard-library ``module`` cannot
    work: the module, already loaded in this process (nothing is imported here), and each
    module on the way hold no such name, and none provides names lazily (a module
    ``__getattr__``, a package's submodule not loaded). Anything else, or a name on a class or
    function, counts as there."""
    found = sys.modules.get(module)
    for part in key.split(".")[1:]:
        if not isinstance(found, type(sys)):
            return False
        names = vars(found)
        if part in names:
            found = names[part]
            continue
        submodule = sys.modules.get(f"{found.__name__}.{part}")
        if submodule is not None:
            found = submodule
            continue
        return "__getattr__" not in names and "__path__" not in names
    return False


def module_names(tree: ast.Module) -> set[str]:
    """Every name a plain ``import`` binds (``import numpy as np`` binds ``np``)."""
    return {
        alias.asname or alias.name.split(".")[0]
        for node in _parsed.of(_parsed.nodes(tree), ast.Import)
        for alias in node.names
    }
