"""What the structural stage may be handed: inputs it is known to handle within its bounds.

libcst's native parser overflows its stack (a segfault that kills the process) on deeply nested
input that CPython's own parser refuses (``((((...``, 2,000 deep), and the structural stage's
time and memory grow with the bytes it parses. So before libcst sees anything, every version
must be at most ``MAX_FILE_BYTES``, parse with ``ast`` (CPython's parser: at most 200 nested
brackets, 100 indentation levels), and nest at most ``MAX_DEPTH`` syntax nodes deep; what reaches
libcst (the texts after setting aside what nobody changed) must each be at most
``MAX_PARSED_BYTES``. Anything else keeps git's line merge, whose own cost is git's. (``ast`` and
the setting aside cost about 3 s of CPU per MB of module: hence the size bound.)
"""

from __future__ import annotations

import ast

from fleet.merge import _parsed

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_PARSED_BYTES",
    "depth",
    "parse_within_bounds",
    "parsed_within_bounds",
]

MAX_FILE_BYTES = 400_000
MAX_PARSED_BYTES = 250_000
MAX_DEPTH = 120


def depth(tree: ast.AST, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of ``tree`` (level by level, so deep trees cannot overflow the stack);
    stops counting once it passes ``limit`` (then ``limit + 1``). The children are
    ``ast.iter_child_nodes``'s, read inline: that generator was most of the cost."""
    level = 0
    nodes: list[ast.AST] = [tree]
    while nodes:
        level += 1
        if level > limit:
            return level
        below: list[ast.AST] = []
        for node in nodes:
            for name in node._fields:
                try:
                    value = getattr(node, name)
                except AttributeError:
                    continue
                if isinstance(value, ast.AST):
                    below.append(value)
                elif isinstance(value, list):
                    below.extend([item for item in value if isinstance(item, ast.AST)])
        nodes = below
    return level


def parse_within_bounds(text: str) -> ast.Module | None:
    """``ast.parse(text)`` if ``text`` is within the bounds above, else None."""
    if len(text) > MAX_FILE_BYTES:
        return None
    try:
        tree = _parsed.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree if _parsed.depth_of(text, tree, MAX_DEPTH) <= MAX_DEPTH else None


def parsed_within_bounds(texts: tuple[str, str, str]) -> bool:
    """True when each text libcst is about to parse is within ``MAX_PARSED_BYTES`` and
    ``MAX_DEPTH``."""
    if max(len(text) for text in texts) > MAX_PARSED_BYTES:
        return False
    return all(parse_within_bounds(text) is not None for text in texts)
