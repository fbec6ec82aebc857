"""Before the structural stage parses anything with libcst: set aside what it need not merge.

libcst's parser is the structural stage's main cost (~60 ms per 1,000 lines), while the stage
only needs the symbols both sides touched. ``ast`` (C, ~20x faster) splits each version into
top-level segments (and a changed class into its members'); a segment byte-identical in all
three versions is replaced by a one-line placeholder of the same kind (a ``def`` by a ``def``,
an import by an import...), so matching, ordering and commutativity are unchanged, and the
original bytes are put back afterwards.

A named segment only one side changed (the same name once in each version, base's text equal to
the other side's) is set aside too, under one placeholder in all three versions: libcst sees
nothing to merge there and the result takes that side's text. The whole-result checks still
read it: they run on ``Reduction.checked``, where only what all three share is set aside. Where
such a placeholder lands inside a conflict (each side's text differs there) the caller merges
``checked`` instead (``_python._merge_reduced``).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass

from fleet.merge import _parsed

__all__ = [
    "PLACEHOLDER",
    "PLACEHOLDER_LINE",
    "Reduction",
    "Segment",
    "expand",
    "reduce_unchanged",
    "segments",
]

PLACEHOLDER = "__fleet_keep_"
PLACEHOLDER_LINE = re.compile(
    r"^[ \t]*(?:def |class |import |from )?(__fleet_keep_\d+__)[^\n]*\n", re.MULTILINE
)
_BLANK_ABOVE = re.compile(r"\A\n+")  # empty lines only: a line of spaces keeps it aside
_TEMPLATES = {
    "def": "def {name}(): pass\n",
    "class": "class {name}: pass\n",
    "import": "import {name}\n",
    "from": "from {name} import x\n",
    "assign": "{name} = 0\n",
    "anon": "{name}\n",
}


@dataclass(frozen=True)
class Segment:
    """One statement (or several sharing a line) with the comment and blank lines above it:
    ``kind`` and ``name`` as the profile identifies it, ``text`` its exact bytes; a class keeps
    its header (kind ``header``: its decorators, ``class ...:`` and the lines before its first
    statement) and its own statements' segments as ``members``."""

    kind: str
    name: str
    text: str
    indent: str = ""
    members: tuple[Segment, ...] = ()


def _identity(stmt: ast.stmt, first: bool) -> tuple[str, str]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return "def", stmt.name
    if isinstance(stmt, ast.ClassDef):
        return "class", stmt.name
    if isinstance(stmt, ast.Import):
        return "import", ",".join(f"{a.name} as {a.asname or ''}" for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom) and not any(a.name == "*" for a in stmt.names):
        return "from", "." * stmt.level + (stmt.module or "")
    if isinstance(stmt, ast.Assign) and [type(t) for t in stmt.targets] == [ast.Name]:
        return "assign", stmt.targets[0].id  # type: ignore[attr-defined]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return "assign", stmt.target.id
    if first and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return "docstring", ""
    return "anon", ""


def _split(lines: list[str], body: list[ast.stmt], start: int) -> list[Segment]:
    """Segments of a statement list whose first segment starts at line index ``start``."""
    groups: list[list[ast.stmt]] = []
    last_end = 0
    for stmt in body:
        assert stmt.end_lineno is not None
        if groups and stmt.lineno <= last_end:
            groups[-1].append(stmt)
        else:
            groups.append([stmt])
        last_end = max(last_end, stmt.end_lineno)
    result = []
    for index, group in enumerate(groups):
        end = max(s.end_lineno or 0 for s in group)
        head = group[0]
        kind, name = _identity(head, index == 0) if len(group) == 1 else ("anon", "")
        members: tuple[Segment, ...] = ()
        indent = lines[head.lineno - 1][: head.col_offset]
        if kind == "class" and isinstance(head, ast.ClassDef) and head.body[0].lineno > head.lineno:
            # The header (decorators, ``class ...:`` and what precedes the first statement) is
            # a segment of its own: the first member can then be set aside like the others.
            first = head.body[0]
            decorators = getattr(first, "decorator_list", [])
            begin = min([first.lineno, *(d.lineno for d in decorators)]) - 1
            header = Segment("header", "", "".join(lines[start:begin]), indent)
            members = (header, *_split(lines, head.body, begin))
        result.append(Segment(kind, name, "".join(lines[start:end]), indent, members))
        start = end
    return result


def segments(text: str) -> list[Segment] | None:
    """The top-level segments of ``text`` (the last one holds the trailing lines), or None if
    it does not parse."""
    try:
        tree = _parsed.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    lines = text.splitlines(keepends=True)
    result = _split(lines, tree.body, 0)
    consumed = sum(len(s.text) for s in result)
    result.append(Segment("anon", "", text[consumed:]))
    return result


_SIDE_OFFSET = 500_000  # one-sided placeholders' numbers: the shared ones keep theirs


@dataclass
class Reduction:
    """The three texts libcst parses (``texts``) and the ones the whole-result checks read
    (``checked``: only what is unchanged in all three set aside, as the checks always saw it).

    ``originals``: each shared placeholder's text. ``sides``: each one-sided placeholder's text
    in each version (a member only one side changed: base and the other side hold the same
    text), as ``checked`` holds it; the merged result takes the side that changed it."""

    texts: tuple[str, str, str]
    checked: tuple[str, str, str]
    originals: dict[str, str]
    sides: dict[str, tuple[str, str, str]]

    def changed(self, name: str) -> str:
        base, ours, theirs = self.sides[name]
        return ours if ours != base else theirs

    def expand_sides(self, text: str) -> str:
        """``text`` (a merge of ``texts``) with each one-sided member's changed text back."""
        if not self.sides:
            return text
        return PLACEHOLDER_LINE.sub(
            lambda m: self.changed(m.group(1)) if m.group(1) in self.sides else m.group(0), text
        )


def _one_sided(versions: list[list[Segment]]) -> list[tuple[int, int, int]]:
    """Indexes (in base, ours, theirs) of the named segments only one side changed: one per
    version under the same name, base's text equal to one side's and not the other's. The
    first segment of a body (a class's header), blank ones and a last line without its line end
    (a file's end: expanded elsewhere it would join the next line) stay."""
    maps: list[dict[tuple[str, str], int]] = []
    for version in versions:
        seen: dict[tuple[str, str], int] = {}
        doubled = set()
        for index, segment in enumerate(version):
            if segment.kind in ("anon", "docstring", "header"):
                continue
            key = (segment.kind, segment.name)
            if key in seen:
                doubled.add(key)
            seen[key] = index
        maps.append({k: i for k, i in seen.items() if k not in doubled and i > 0})
    found = []
    for key, index_b in maps[0].items():
        index_o, index_t = maps[1].get(key), maps[2].get(key)
        if index_o is None or index_t is None:
            continue
        base, ours, theirs = (
            v[i].text for v, i in zip(versions, (index_b, index_o, index_t), strict=True)
        )
        ends = base.endswith("\n") and ours.endswith("\n") and theirs.endswith("\n")
        changed = ours if base == theirs else theirs
        # not when only the blank lines above changed: merged with its neighbours (_group_head)
        if ends and base.strip() and (base == ours) != (base == theirs) and (
            _BLANK_ABOVE.sub("", base) != _BLANK_ABOVE.sub("", changed)
        ):
            found.append((index_b, index_o, index_t))
    return found


class _Reducer:
    def __init__(self) -> None:
        self.originals: dict[str, str] = {}
        self.sides: dict[str, tuple[str, str, str]] = {}

    def reduce(
        self, versions: list[list[Segment]], sided: bool = True
    ) -> tuple[list[str], list[str]]:
        """Each version's text with the segments shared by all three set aside (what the checks
        read), and the same with the segments only one side changed set aside as well (what
        libcst parses; not when ``sided`` is false: inside a class set aside whole)."""
        one_sided = _one_sided(versions) if sided else []
        whole = {indexes[0] for indexes in one_sided}
        text_counts = [Counter(s.text for s in v) for v in versions]
        key_counts = [Counter((s.kind, s.name) for s in v if s.kind != "anon") for v in versions]
        # The same text can be another kind of segment in another version: an attribute's
        # docstring that became the class's own when the attribute above it was deleted
        # (sqlalchemy 036da3036643): set aside only what is the same kind in all three.
        text_kinds = [Counter((s.text, s.kind) for s in v) for v in versions]
        frozen: dict[str, str] = {}
        for index, segment in enumerate(versions[0]):
            shared = all(counts[segment.text] == 1 for counts in text_counts) and all(
                kinds[(segment.text, segment.kind)] == 1 for kinds in text_kinds
            )
            unique = all(counts[(segment.kind, segment.name)] <= 1 for counts in key_counts)
            # The first segment is never set aside: in a class it is the class header.
            keep = index == 0 or segment.kind == "docstring" or not segment.text.strip()
            if shared and unique and not keep:
                frozen[segment.text] = f"{PLACEHOLDER}{len(self.originals)}__"
                self.originals[frozen[segment.text]] = segment.text
        classes: list[dict[str, Segment]] = [
            {s.name: s for s in v if s.kind == "class" and s.members} for v in versions
        ]
        out = []
        for version in versions:
            parts = []
            for segment in version:
                name = frozen.get(segment.text)
                if name is None:
                    parts.append(segment.text)
                else:
                    parts.append(segment.indent + _TEMPLATES[segment.kind].format(name=name))
            out.append(parts)
        parsed = [list(parts) for parts in out]
        for name in sorted(set(classes[0]) & set(classes[1]) & set(classes[2])):
            if not all(counts[("class", name)] == 1 for counts in key_counts):
                continue
            trio = [c[name] for c in classes]
            if len({s.text for s in trio}) == 1:
                continue  # frozen whole, or identical but not unique: leave it
            inner = versions[0].index(trio[0]) not in whole
            reduced, checked = self.reduce([list(s.members) for s in trio], inner)
            for version, segment, many, few, parts, parts_parsed in zip(
                versions, trio, checked, reduced, out, parsed, strict=True
            ):
                parts[version.index(segment)] = many
                parts_parsed[version.index(segment)] = few
        for indexes in one_sided:
            name = f"{PLACEHOLDER}{_SIDE_OFFSET + len(self.sides)}__"
            self.sides[name] = (out[0][indexes[0]], out[1][indexes[1]], out[2][indexes[2]])
            for version, parts_parsed, index in zip(versions, parsed, indexes, strict=True):
                segment = version[index]
                parts_parsed[index] = segment.indent + _TEMPLATES[segment.kind].format(name=name)
        return ["".join(parts) for parts in parsed], ["".join(parts) for parts in out]


def reduce_unchanged(base: str, ours: str, theirs: str) -> Reduction | None:
    """The three texts with every segment unchanged in all three (top level and inside classes)
    replaced by a placeholder (``checked``), and also every named segment only one side changed
    (``texts``); None when there is nothing to gain or it is unsafe (a placeholder name in use,
    CR line ends, a parse failure)."""
    texts = (base, ours, theirs)
    if any(PLACEHOLDER in t or "\r" in t for t in texts):
        return None
    versions = [segments(t) for t in texts]
    split = [v for v in versions if v is not None]
    if len(split) != 3:
        return None
    reducer = _Reducer()
    reduced, checked = reducer.reduce(split)
    if not reducer.originals and not reducer.sides:
        return None
    return Reduction(
        (reduced[0], reduced[1], reduced[2]),
        (checked[0], checked[1], checked[2]),
        reducer.originals,
        reducer.sides,
    )


def expand(text: str, originals: dict[str, str]) -> str:
    """Put the original segments back in place of their placeholders."""

    return PLACEHOLDER_LINE.sub(lambda match: originals[match.group(1)], text)
