"""A module path one side renamed in every import while the other side adds an import the old
way (wagtail ``340226b340c0``, ``wagtail/contrib/settings/tests/test_admin.py``: theirs made the
Wagtail 2.0 package rename, ``wagtail.wagtailcore`` -> ``wagtail.core`` in each import; ours
added ``from wagtail.wagtailadmin.edit_handlers import ...``; the clean merge kept that import
in the old spelling, an ``ImportError`` after the rename, where the humans wrote
``wagtail.admin.edit_handlers``).

The rename is read from pairs of import lines: a ``from`` import of base whose module the side
no longer imports, and one of the side's whose module base never imports, importing a name in
common. The two modules' common head and tail leave the old and the new prefix (``wagtail.``
and ``core.models`` leave ``wagtail.wagtail`` -> ``wagtail.``). The file conflicts when

- base imports two modules or more under the old prefix, and the side imports every one of
  them under the new prefix (replaced, not deleted: one side dropping a dependency is no
  rename; one name moved to another module is none either), the side's text no longer holds
  the old prefix anywhere, and the prefix names a package below the top level;
- the result imports under the old prefix only through import lines the other side added,
  each from a module base never imports (another name from a module that stays is no sign).
"""

from __future__ import annotations

import ast

from fleet.merge import _parsed

__all__ = ["prefix_retired"]

_Imports = set[tuple[str, frozenset[str]]]


def _imports(tree: ast.Module) -> _Imports:
    """(module, names imported) of each absolute import, anywhere in the file; a plain
    ``import a.b`` imports no name."""
    found = _parsed.nodes(tree)
    out: _Imports = {
        (node.module, frozenset(alias.name for alias in node.names))
        for node in _parsed.of(found, ast.ImportFrom)
        if node.level == 0 and node.module
    }
    for node in _parsed.of(found, ast.Import):
        out.update((alias.name, frozenset()) for alias in node.names)
    return out


_Rename = tuple[str, str, bool]  # old prefix, new prefix, whether the old one ends a component


def _rename(old: str, new: str) -> _Rename | None:
    """The prefix ``old`` -> ``new`` replaces, from the two modules' common head and tail; None
    when it is the top-level package or cuts a component in a way no prefix rename does."""
    shorter = min(len(old), len(new))
    head = next((i for i in range(shorter) if old[i] != new[i]), shorter)
    tail = 0
    while tail < shorter - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    prefix_old, prefix_new = old[: len(old) - tail], new[: len(new) - tail]
    while prefix_old.endswith(".") and prefix_new.endswith("."):
        prefix_old, prefix_new = prefix_old[:-1], prefix_new[:-1]
    if not prefix_old.partition(".")[2].strip("."):
        return None  # the top-level package (another dependency) or its first dot only
    whole = len(prefix_old) == len(old) or old[len(prefix_old)] == "."
    if not whole and not (prefix_new.endswith(".") or not prefix_new):
        return None  # ``wagtailcore`` -> ``core`` drops a component's head; nothing else
    return prefix_old, prefix_new, whole


def _under(module: str, rename: _Rename) -> bool:
    prefix, _, whole = rename
    if not module.startswith(prefix):
        return False
    return not whole or len(module) == len(prefix) or module[len(prefix)] == "."


def prefix_retired(texts: list[str], trees: list[ast.Module]) -> str | None:
    """``texts`` and ``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_imports(tree) for tree in trees)
    base_modules = {module for module, _ in base}
    for side, other, text in ((ours, theirs, texts[1]), (theirs, ours, texts[2])):
        side_modules = {module for module, _ in side}
        renames: set[_Rename] = set()
        for module, names in base:
            if module in side_modules or not names:
                continue
            for new, new_names in side:
                if new not in base_modules and names & new_names:
                    rename = _rename(module, new)
                    renames |= {rename} if rename is not None else set()
        for rename in sorted(renames):
            prefix, replacement, _ = rename
            before = {m for m in base_modules if _under(m, rename)}
            if prefix in text or any(_under(m, rename) for m in side_modules):
                continue
            if len(before) < 2 or any(
                replacement + m[len(prefix) :] not in side_modules for m in before
            ):
                continue
            kept = {item for item in merged if _under(item[0], rename)}
            if kept and all(item in other and item[0] not in base_modules for item in kept):
                return (
                    f"one side renamed every import under {prefix} to {replacement}; the other "
                    f"adds one under {prefix}"
                )
    return None
