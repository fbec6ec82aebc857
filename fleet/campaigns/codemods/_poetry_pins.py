"""The TOML scanning of the pin mover, and its Poetry tables: ``[tool.poetry.dependencies]``,
``[tool.poetry.dev-dependencies]``, ``[tool.poetry.group.<name>.dependencies]`` and their
``[... .dependencies.<name>]`` sub-tables.

A moved entry's version string alone is rewritten, in each of Poetry's forms: ``pydantic =
"^1.8"``, ``pydantic = {version = "^1.10", extras = ["email"]}``, an array of such tables (one
per Python range: each one's version moves, its ``python`` stays) and ``version = "..."`` in a
sub-table; the key, extras, markers, quotes, comments and every other byte stay. The old
constraint is read as Poetry reads it (:func:`fleet.verify.poetry.to_specifier`) and an entry
already asking for the new range is left. The new pin is written in Poetry's own words: a range
that is a caret range (``>=2,<3``) as ``^2``; any other as the campaign's PEP 440 specifier,
which Poetry takes as it is (``>=2.5,<2.8``). A table with no ``version`` and a ``git`` /
``path`` / ``url`` entry are not touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from fleet.verify.poetry import caret, to_specifier

__all__ = ["TOML_HEADER", "TOML_STRING", "array_end", "poetry_edits"]

TOML_HEADER = re.compile(r"^\s*\[([^\]]+)\]\s*(?:#.*)?$", re.M)
TOML_STRING = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'([^'\n]*)'")
_TABLES = re.compile(r"tool\.poetry\.(?:dependencies|dev-dependencies|group\.[^.]+\.dependencies)")
_KEY = re.compile(r"^[ \t]*(?:\"([^\"\n]+)\"|'([^'\n]+)'|([A-Za-z0-9_.-]+))[ \t]*=[ \t]*", re.M)
_VERSION_KEY = re.compile(r"(?:version|\"version\"|'version')\s*=\s*")


def array_end(text: str, start: int, limit: int, close: str = "]") -> int:
    """Where the array (or inline table, ``close="}"``) opened before ``start`` closes."""
    i = start
    depth = 0
    while i < limit:
        ch = text[i]
        if ch in "\"'":
            m = TOML_STRING.match(text, i)
            i = m.end() if m else i + 1
            continue
        if ch == "#":
            nl = text.find("\n", i)
            i = limit if nl < 0 else nl
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            if depth == 0:
                return i if ch == close else limit
            depth -= 1
        i += 1
    return limit


def _strings_of_version(text: str, start: int, end: int) -> Iterator[re.Match[str]]:
    """The ``version = "..."`` strings between ``start`` and ``end``, outside other strings."""
    i = start
    while i < end:
        ch = text[i]
        if ch == "#":
            nl = text.find("\n", i, end)
            i = end if nl < 0 else nl
            continue
        key = _VERSION_KEY.match(text, i)
        if key and (i == start or not (text[i - 1].isalnum() or text[i - 1] in "_-")):
            value = TOML_STRING.match(text, key.end())
            if value and value.end() <= end:
                yield value
                i = value.end()
                continue
        if ch in "\"'":
            m = TOML_STRING.match(text, i)
            i = m.end() if m else i + 1
            continue
        i += 1


def _pin(old: str, new: str) -> str | None:
    """The text of a Poetry constraint asking for ``new`` in place of ``old``, or None when
    ``old`` is no constraint or already asks for it."""
    was = to_specifier(old)
    if was is None or "\\" in old or SpecifierSet(was) == SpecifierSet(new):
        return None
    lows = [s.version for s in SpecifierSet(new) if s.operator == ">="]
    if len(lows) == 1 and (got := caret(lows[0])) and SpecifierSet(got) == SpecifierSet(new):
        return f"^{lows[0]}"
    return new


def poetry_edits(text: str, moves: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """``(start, end, new)`` replacements of the moved entries' version strings."""
    wanted = {canonicalize_name(k): v for k, v in moves.items()}
    headers = list(TOML_HEADER.finditer(text))
    edits: list[tuple[int, int, str]] = []
    for i, header in enumerate(headers):
        name = header[1].strip()
        body, end = header.end(), headers[i + 1].start() if i + 1 < len(headers) else len(text)
        strings: list[tuple[re.Match[str], str]] = []
        table = _TABLES.fullmatch(name)
        sub = _TABLES.match(name)
        if table:
            for key in _KEY.finditer(text, body, end):
                new = wanted.get(canonicalize_name(key[1] or key[2] or key[3]))
                at = key.end()
                if new is None or at >= end:
                    continue
                if text[at] in "\"'":
                    value = TOML_STRING.match(text, at)
                    strings += [(value, new)] if value else []
                elif text[at] in "[{":
                    close = array_end(text, at + 1, end, "]" if text[at] == "[" else "}")
                    strings += [(m, new) for m in _strings_of_version(text, at + 1, close)]
        elif sub and name[sub.end():sub.end() + 1] == ".":
            new = wanted.get(canonicalize_name(name[sub.end() + 1:].strip("\"' ")))
            if new is not None:
                for key in _KEY.finditer(text, body, end):
                    if (key[1] or key[2] or key[3]) == "version":
                        value = TOML_STRING.match(text, key.end())
                        strings += [(value, new)] if value else []
        for value, new in strings:
            old = value[1] if value[1] is not None else value[2]
            pin = _pin(old, new)
            if pin is not None:
                edits.append((value.start() + 1, value.end() - 1, pin))
    return edits
