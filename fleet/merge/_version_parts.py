"""A whole-result check: a version number spelled as parts (``MAJOR``, ``MINOR``, ``MICRO``)
that both sides changed, each another part, merged into a version neither side has (kivy
``bb00aa60d135``, ``kivy/_version.py``: ``MICRO = 1`` on a maintenance branch, 2.2.1, and
``MINOR = 3`` on the main line, 2.3.0; the merge gave 2.3.1, the humans kept 2.3.0). Each part
is its own binding, so no other check sees it; which branch's version is meant is unknown, so
the file conflicts."""

from __future__ import annotations

import ast
import re

__all__ = ["version_parts_combined"]

_PART = re.compile(r"(?:^|_)(major|minor|micro|patch)(?:$|_)", re.IGNORECASE)


def _parts(body: list[ast.stmt], prefix: str, out: dict[str, tuple[str, str]]) -> None:
    """scope-qualified name -> (its part word, its value's dump) for every integer assigned to
    a version part's name in the module and its classes."""
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            _parts(stmt.body, f"{prefix}{stmt.name}.", out)
            continue
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        if not (isinstance(value, ast.Constant) and type(value.value) is int):
            continue
        match = _PART.search(targets[0].id)
        if match:
            out[prefix + targets[0].id] = (match.group(1).lower(), ast.dump(value))


def version_parts_combined(trees: list[ast.Module]) -> str | None:
    """Why the result (``trees[3]``) combines two sides' edits of different parts of one
    version, or None: both sides changed the parts, and the result's parts are neither side's."""
    found: list[dict[str, tuple[str, str]]] = []
    for tree in trees:
        parts: dict[str, tuple[str, str]] = {}
        _parts(tree.body, "", parts)
        found.append(parts)
    names = sorted(set().union(*found))
    scopes = {name.rpartition(".")[0] for name in names}
    for scope in sorted(scopes):
        inside = [n for n in names if n.rpartition(".")[0] == scope]
        words = {part[n][0] for part in found for n in inside if n in part}
        if len(words) < 2:  # one part alone is not a version spelled in parts
            continue
        base, ours, theirs, merged = (
            tuple(part[n][1] if n in part else None for n in inside) for part in found
        )
        if ours != base and theirs != base and merged not in (ours, theirs):
            return f"the version parts {', '.join(inside)} would hold a version neither side has"
    return None
