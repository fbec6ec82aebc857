"""A module path one side renamed or moved in every import while the other side adds an import
the old way.

- wagtail ``340226b340c0``, ``wagtail/contrib/settings/tests/test_admin.py``: theirs made the
  Wagtail 2.0 package rename, ``wagtail.wagtailcore`` -> ``wagtail.core`` in each import; ours
  added ``from wagtail.wagtailadmin.edit_handlers import ...``; the clean merge kept that import
  in the old spelling, an ``ImportError`` after the rename (the humans wrote
  ``wagtail.admin.edit_handlers``).
- scikit-image ``56d1ad915989``, ``dd348640233e``, ``a530fbb26c9b`` (fifteenth set): one side
  moved the shared package, ``from .._shared.utils import ...`` (or ``skimage._shared.utils``)
  -> ``from _skimage2._shared.utils import ...``; the other side added
  ``from .._shared.version_requirements import require`` (``.._shared._warnings``,
  ``skimage._shared.testing``), kept in the old spelling: ``skimage/_shared`` no longer exists.

Relative imports are read too, resolved against a made-up package path deep enough for any
level (the rule has no file path), so ``.._shared.utils`` and ``_skimage2._shared.utils`` share
the tail ``_shared.utils``. The rename is read from pairs of import lines: a ``from`` import of
base whose module the side no longer imports, and one of the side's whose module base never
imports, importing a name in common. Two readings of a pair:

- a move that keeps a common tail of whole components after the changed head names the moved
  package as that head and the first common component (``skimage._shared.utils`` ->
  ``_skimage2._shared.utils`` moves ``skimage._shared`` -> ``_skimage2._shared``): never a
  top-level package by itself, and one import of base under it is enough. A relative spelling
  turned absolute may be the same module written two ways (``.._shared`` -> ``skimage._shared``),
  so it counts only when base's text never names the new top-level package and the side imports
  nothing else under it; an absolute one turned relative never counts;
- otherwise (absolute imports only) the two modules' common head and tail leave the old and the
  new prefix (``wagtail.`` and ``core.models`` leave ``wagtail.wagtail`` -> ``wagtail.``); the
  prefix names a package below the top level and base imports two modules or more under it.

The file conflicts when the side imports every module of base under the old prefix under the
new one (replaced, not deleted: one side dropping a dependency is no rename; one name moved to
another module is none either), the side's text no longer holds the old prefix anywhere, and
the result imports under the old prefix only through import lines the other side added, each
from a module base never imports (another name from a module that stays is no sign).

:func:`implicit_relative_retired`: Python 2's implicit relative imports made explicit by one side
(PyGithub ``f9c4303c53b3``, ``github/tests/AllTests.py``, the twenty-first unseen set: ours
added ``from __future__ import absolute_import`` and made each of the 81 ``from Tag import *``
``from .Tag import *``; theirs added ``from Traffic import *`` among them, kept so by the clean
merge: ``Traffic`` is a sibling module, an ``ImportError`` now). The file conflicts when a side
turned two or more module-level ``from M import`` of base into ``from .M import`` and kept no
absolute import of them, while the result keeps an absolute ``from N import`` that only the
other side added, of a module base never imports, placed there right beside an import of
base that the first side turned relative.
"""

from __future__ import annotations

import ast
import re

from fleet.merge import _parsed

__all__ = ["implicit_relative_retired", "prefix_retired"]

_Imports = set[tuple[str, frozenset[str]]]

# The made-up package a relative import is resolved against: level n drops n - 1 components.
_HERE = tuple(f"__p{i}" for i in range(1, 9))


def _module(node: ast.ImportFrom) -> str | None:
    if node.level == 0 or node.level > len(_HERE):
        return node.module if node.level == 0 else None
    return ".".join(_HERE[: len(_HERE) - node.level + 1] + ((node.module,) if node.module else ()))


def _relative(module: str) -> bool:
    return module.partition(".")[0] == _HERE[0]


def _spelled(module: str) -> str:
    """``module`` as written: a resolved relative one with its leading dots again."""
    if not _relative(module):
        return module
    parts = module.split(".")
    here = 0
    while here < min(len(parts), len(_HERE)) and parts[here] == _HERE[here]:
        here += 1
    return "." * (len(_HERE) - here + 1) + ".".join(parts[here:])


def _imports(tree: ast.Module) -> _Imports:
    """(module, names imported) of each import, anywhere in the file, a relative one resolved;
    a plain ``import a.b`` imports no name."""
    found = _parsed.nodes(tree)
    out: _Imports = set()
    for node in _parsed.of(found, ast.ImportFrom):
        module = _module(node)
        if module:
            out.add((module, frozenset(alias.name for alias in node.names)))
    for plain in _parsed.of(found, ast.Import):
        out.update((alias.name, frozenset()) for alias in plain.names)
    return out


# old prefix, new prefix, whether the old one ends a component, whether a package move
_Rename = tuple[str, str, bool, bool]


def _moved(old: str, new: str) -> _Rename | None:
    """The package a move with a common tail of whole components names: the changed head and the
    first common component; None without a tail, for a top-level package, or for an absolute
    spelling turned relative (perhaps the same module)."""
    if _relative(new) and not _relative(old):
        return None
    before, after = old.split("."), new.split(".")
    shorter = min(len(before), len(after))
    head = next((i for i in range(shorter) if before[i] != after[i]), shorter)
    tail = 0
    while tail < shorter - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    package = len(before) - tail + 1
    if not tail or package < 2:
        return None
    return ".".join(before[:package]), ".".join(after[: len(after) - tail + 1]), True, True


def _rename(old: str, new: str) -> _Rename | None:
    """The prefix ``old`` -> ``new`` replaces, from the two modules' common head and tail; None
    when it is the top-level package or cuts a component in a way no prefix rename does."""
    if _relative(old) or _relative(new):
        return None
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
    return prefix_old, prefix_new, whole, False


def _under(module: str, rename: _Rename) -> bool:
    prefix, _, whole, _ = rename
    if not module.startswith(prefix):
        return False
    return not whole or len(module) == len(prefix) or module[len(prefix)] == "."


def _respelled(rename: _Rename, base: str, side: set[str]) -> bool:
    """Whether a relative spelling turned absolute may name the same module: base's text names
    the new top-level package (``.._shared`` -> ``skimage._shared`` in a file naming skimage),
    or the side imports another module under it (every relative import written absolute)."""
    prefix, replacement, _, _ = rename
    if not _relative(prefix) or _relative(replacement):
        return False
    top = replacement.partition(".")[0]
    moved: _Rename = (replacement, prefix, True, True)
    if any(m.partition(".")[0] == top and not _under(m, moved) for m in side):
        return True
    return re.search(rf"(?<![\w.]){re.escape(top)}(?!\w)", base) is not None


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
                    found = (_moved(module, new), _rename(module, new))
                    renames.update(rename for rename in found if rename is not None)
        for rename in sorted(renames):
            prefix, replacement, _, moved = rename
            before = {m for m in base_modules if _under(m, rename)}
            if prefix in text or any(_under(m, rename) for m in side_modules):
                continue
            if len(before) < (1 if moved else 2) or any(
                replacement + m[len(prefix) :] not in side_modules for m in before
            ):
                continue
            if _respelled(rename, texts[0], side_modules):
                continue
            kept = {item for item in merged if _under(item[0], rename)}
            if kept and all(item in other and item[0] not in base_modules for item in kept):
                old, new = _spelled(prefix), _spelled(replacement)
                return (
                    f"one side renamed every import under {old} to {new}; the other adds one "
                    f"under {old}"
                )
    return None


def _top_from(tree: ast.Module) -> list[tuple[int, str | None]]:
    """(level, module) of each module-level statement, (-1, None) where it is no ``from``
    import."""
    return [(node.level, node.module) if isinstance(node, ast.ImportFrom) else (-1, None)
            for node in tree.body]


def implicit_relative_retired(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_top_from(tree) for tree in trees)
    absolute = {module for level, module in base if level == 0 and module}
    kept = {module for level, module in merged if level == 0 and module}
    for side, other in ((ours, theirs), (theirs, ours)):
        relative = {module for level, module in side if level == 1 and module}
        still = {module for level, module in side if level == 0 and module}
        made = (absolute & relative) - still
        if len(made) < 2:
            continue
        for at, (level, module) in enumerate(other):
            if level != 0 or not module or module in absolute or module not in kept:
                continue
            beside = other[max(at - 1, 0) : at] + other[at + 1 : at + 2]
            if any(lvl == 0 and near in made for lvl, near in beside):
                return (
                    f"{module} is imported as a top-level module beside imports the other "
                    f"side made relative (from .{min(made)} ...)"
                )
    return None
