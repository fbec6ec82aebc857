"""Languages as data: which grammar and which query file serve which file extension.

Adding a language = a grammar package, a ``queries/<name>.scm`` file following the capture
conventions documented in ``queries/python.scm``, and an import reader in ``_imports.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import tree_sitter as ts

__all__ = [
    "DEF",
    "IMPORT",
    "LANGUAGE_NAMES",
    "LOCAL",
    "NONE",
    "PRIORITY",
    "REF",
    "SPECS",
    "Compiled",
    "LanguageSpec",
    "compiled",
    "spec_for",
]


def _python() -> object:
    import tree_sitter_python

    return tree_sitter_python.language()


def _javascript() -> object:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _typescript() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _go() -> object:
    import tree_sitter_go

    return tree_sitter_go.language()


@dataclass(frozen=True)
class LanguageSpec:
    """One grammar + query file. ``name`` is the language reported on symbols; ``grammar`` keys
    the parser (tsx and typescript share a query file but not a grammar)."""

    name: str
    grammar: str
    extensions: tuple[str, ...]
    query_file: str
    loader: Callable[[], object] = field(compare=False)


SPECS: tuple[LanguageSpec, ...] = (
    LanguageSpec("python", "python", (".py", ".pyi"), "python.scm", _python),
    LanguageSpec("javascript", "javascript", (".js", ".mjs", ".cjs", ".jsx"), "javascript.scm",
                 _javascript),
    LanguageSpec("typescript", "typescript", (".ts", ".mts", ".cts"), "typescript.scm",
                 _typescript),
    LanguageSpec("typescript", "tsx", (".tsx",), "typescript.scm", _tsx),
    LanguageSpec("go", "go", (".go",), "go.scm", _go),
)

LANGUAGE_NAMES: frozenset[str] = frozenset(s.name for s in SPECS)
_BY_EXT: dict[str, LanguageSpec] = {ext: s for s in SPECS for ext in s.extensions}


def spec_for(path: str, languages: frozenset[str] | None = None) -> LanguageSpec | None:
    """The spec serving ``path`` (by extension), or None when no (enabled) language does."""
    dot = path.rfind(".")
    spec = _BY_EXT.get(path[dot:]) if dot >= 0 else None
    if spec is None or (languages is not None and spec.name not in languages):
        return None
    return spec


_ROLE = re.compile(r"@(definition\.\w+|reference\.\w+|import|local)\b")


@dataclass(frozen=True)
class Compiled:
    """A parser and query for one grammar; ``roles[i]`` is pattern i's role capture name and
    ``plan[i]`` the same decoded once for the extractor's hot loop: ``(code, capture name,
    kind, priority)`` with code ``LOCAL``, ``REF``, ``DEF``, ``IMPORT`` or ``NONE``."""

    language: ts.Language
    parser: ts.Parser
    query: ts.Query
    roles: tuple[str, ...]
    plan: tuple[tuple[int, str, str, int], ...] = ()


NONE, LOCAL, REF, DEF, IMPORT = -1, 0, 1, 2, 3
# When two patterns capture one node, the stronger reference kind wins (lower first).
PRIORITY = {"inherit": 0, "call": 1, "attribute": 2, "name": 3}


def _plan(role: str) -> tuple[int, str, str, int]:
    if role == "local":
        return (LOCAL, role, "", 9)
    if role.startswith("reference."):
        kind = role[len("reference."):]
        return (REF, role, kind, PRIORITY[kind])
    if role.startswith("definition."):
        return (DEF, role, role[len("definition."):], 0)
    if role == "import":
        return (IMPORT, role, "", 0)
    return (NONE, role, "", 0)


@cache
def compiled(grammar: str) -> Compiled:
    spec = next(s for s in SPECS if s.grammar == grammar)
    lang = ts.Language(spec.loader())
    text = resources.files("fleet.graph").joinpath("queries", spec.query_file).read_text("utf-8")
    query = ts.Query(lang, text)
    raw = text.encode("utf-8")
    roles: list[str] = []
    for i in range(query.pattern_count):
        pattern = raw[query.start_byte_for_pattern(i) : query.end_byte_for_pattern(i)].decode()
        found = [m for m in _ROLE.findall(pattern) if m != "local" or "@local" in pattern]
        # The outermost role capture is the last one written in the pattern.
        roles.append(found[-1] if found else "")
    return Compiled(lang, ts.Parser(lang), query, tuple(roles),
                    tuple(_plan(r) for r in roles))
