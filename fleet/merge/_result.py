"""Value types of a three-way merge: ``MergeResult = Clean | Conflicted``."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "MARKER_BASE",
    "MARKER_OURS",
    "MARKER_SEP",
    "MARKER_THEIRS",
    "Clean",
    "ConflictRegion",
    "Conflicted",
    "MergeResult",
    "parse_conflicts",
    "relabel",
]

MARKER_OURS = "<<<<<<<"
MARKER_BASE = "|||||||"
MARKER_SEP = "======="
MARKER_THEIRS = ">>>>>>>"


@dataclass(frozen=True)
class ConflictRegion:
    """One conflicted region of a merge result, as it appears in the marker text.

    ``start_line``/``end_line`` are the 1-based lines of the ``<<<<<<<`` and ``>>>>>>>`` markers;
    ``ours``/``base``/``theirs`` are the three sides' text between the markers (diff3 style).
    """

    start_line: int
    end_line: int
    ours: str
    base: str
    theirs: str


@dataclass(frozen=True)
class Clean:
    """The merge succeeded. ``stage`` names the stage that produced it: ``line`` (git's
    ``merge-file`` result, kept identical) or ``structural`` (the syntax-tree merge)."""

    text: str
    stage: str = "line"


@dataclass(frozen=True)
class Conflicted:
    """The merge left conflicts: ``text_with_markers`` carries diff3-style markers
    (``<<<<<<< ours`` / ``||||||| base`` / ``=======`` / ``>>>>>>> theirs``), one per region."""

    text_with_markers: str
    conflicts: tuple[ConflictRegion, ...]
    stage: str = "line"

    @property
    def conflicted_lines(self) -> int:
        """Lines inside conflict regions, markers included: smaller means narrower markers."""
        return sum(region.end_line - region.start_line + 1 for region in self.conflicts)


MergeResult = Clean | Conflicted


def parse_conflicts(text: str) -> tuple[ConflictRegion, ...]:
    """The diff3-style conflict regions of ``text`` (markers at the start of a line)."""
    regions: list[ConflictRegion] = []
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        if not lines[index].startswith(MARKER_OURS):
            index += 1
            continue
        start = index
        parts: dict[str, list[str]] = {"ours": [], "base": [], "theirs": []}
        current = "ours"
        index += 1
        while index < len(lines) and not lines[index].startswith(MARKER_THEIRS):
            line = lines[index]
            if line.startswith(MARKER_BASE):
                current = "base"
            elif line.startswith(MARKER_SEP) and line.rstrip("\r\n") == MARKER_SEP:
                current = "theirs"
            else:
                parts[current].append(line)
            index += 1
        regions.append(
            ConflictRegion(
                start_line=start + 1,
                end_line=min(index, len(lines) - 1) + 1,
                ours="".join(parts["ours"]),
                base="".join(parts["base"]),
                theirs="".join(parts["theirs"]),
            )
        )
        index += 1
    return tuple(regions)


def relabel(text: str, ours: str, base: str, theirs: str) -> str:
    """``text`` with the labels of its conflict markers (``<<<<<<< ours``, ``||||||| base``,
    ``>>>>>>> theirs``, as every stage writes them) replaced by the given ones; lines outside a
    conflict region are left as they are."""
    lines = text.splitlines(keepends=True)
    inside = False
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if not inside and body == f"{MARKER_OURS} ours":
            lines[index] = f"{MARKER_OURS} {ours}{ending}"
            inside = True
        elif inside and body == f"{MARKER_BASE} base":
            lines[index] = f"{MARKER_BASE} {base}{ending}"
        elif inside and body == f"{MARKER_THEIRS} theirs":
            lines[index] = f"{MARKER_THEIRS} {theirs}{ending}"
            inside = False
    return "".join(lines)
