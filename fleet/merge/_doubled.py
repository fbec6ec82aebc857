"""Whole-file checks for text a clean result holds twice where each side held it once. Found by
reading the earlier sets' clean results that differ from the humans' (5 Dec); the file
conflicts instead.

- :func:`added_twice`: in one scope, a definition only ours added and one only theirs added,
  equal but for their names (decorators, arguments, body): the same addition made by both sides
  under two names, which a merge keeps twice (attrs ``870867759952``: the fixture
  ``@pytest.fixture(name="slots")`` as ``def slots`` on one side and ``def _slots`` on the other,
  registered twice; aiohttp ``bc6d87d20b72`` and poetry ``2a9c16adbedf``: one test added twice
  under two names). The humans kept one each time.
- :func:`comment_multiplied`: a whole-line comment the result holds more often than both sides
  together account for (``ours + theirs - base``, and at least either side's count): text the
  merge itself copied (scrapy ``2d9857b44127``: ours' ``# TODO`` above its new list item came out
  above each of 16 items, since fixed in ``_sets``; Pillow ``31a8da48eeb1``: a section comment
  above both sides' new classes, since kept once by ``_order.comment_once``). A net for the
  copies no stage knows of yet.
"""

from __future__ import annotations

import ast
from collections import Counter

from fleet.merge import _parsed

__all__ = ["added_twice", "comment_multiplied", "doubled"]

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
# The smallest definition counted: attrs' fixture (a decorator call with two keywords, one
# parameter, ``return request.param``) has 15 nodes.
LEAST_NODES = 12


def _definitions(tree: ast.Module) -> dict[tuple[str, str], _Def]:
    """Each def/class of the module's and its classes' bodies by (scope, name)."""
    found: dict[tuple[str, str], _Def] = {}
    stack: list[tuple[list[ast.stmt], str]] = [(tree.body, "")]
    while stack:
        body, scope = stack.pop()
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[(scope, stmt.name)] = stmt
                if isinstance(stmt, ast.ClassDef):
                    stack.append((stmt.body, f"{scope}{stmt.name}."))
    return found


def _unnamed(node: _Def) -> str | None:
    """A definition without its name (decorators, arguments or bases, body), or None for one
    too small to tell a copy from a coincidence: fewer than :data:`LEAST_NODES` nodes
    (``def c(): pass`` beside ``def d(): pass`` is two stubs, not one definition twice)."""
    parts: list[ast.AST] = [*node.decorator_list, *node.body]
    if isinstance(node, ast.ClassDef):
        parts += [*node.bases, *node.keywords]
    else:
        parts.append(node.args)
    if sum(1 for part in parts for _ in ast.walk(part)) < LEAST_NODES:
        return None
    return "\n".join(ast.dump(part) for part in parts)


def added_twice(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_definitions(tree) for tree in trees)
    only_ours = [
        (key, node)
        for key, node in ours.items()
        if key not in base and key not in theirs and key in merged
    ]
    only_theirs = [
        (key, node)
        for key, node in theirs.items()
        if key not in base and key not in ours and key in merged
    ]
    if not only_ours or not only_theirs:
        return None
    shapes: dict[tuple[str, type, str], str] = {}
    for (scope, name), node in only_ours:
        shape = _unnamed(node)
        if shape is not None:
            shapes.setdefault((scope, type(node), shape), name)
    for (scope, name), node in only_theirs:
        shape = _unnamed(node)
        twin = None if shape is None else shapes.get((scope, type(node), shape))
        if twin is not None:
            return f"both sides added one definition under two names: {twin} and {name}"
    return None


def _comments(text: str) -> Counter[str]:
    return Counter(
        stripped for line in text.splitlines() if (stripped := line.strip()).startswith("#")
    )


def comment_multiplied(texts: list[str]) -> str | None:
    """``texts``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_comments(text) for text in texts)
    for comment, count in merged.items():
        each = ours[comment], theirs[comment]
        if count > max(*each, sum(each) - base[comment]):
            return f"the merge repeats the comment {comment[:60]!r} ({count} times)"
    return None


def doubled(base: str, ours: str, theirs: str, merged: str) -> str | None:
    """Why the clean result ``merged`` of the whole texts holds something twice that each side
    holds once (see the module docstring), or None. Texts that do not parse: only the comments
    are counted."""
    texts = [base, ours, theirs, merged]
    reason = comment_multiplied(texts)
    if reason is not None:
        return reason
    try:
        trees = [_parsed.parse(text) for text in texts]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return added_twice(trees)
