"""The structural stage's working state: conflicts recorded as sentinel statements while a
module is merged, turned into diff3 markers once it is rendered (``render_markers``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from fleet.errors import FleetError
from fleet.merge._pykeys import Key
from fleet.merge.profile import LanguageProfile

__all__ = ["SENTINEL", "Context", "Maps", "Stmts", "Unsure", "render_markers"]

SENTINEL = "__fleet_merge_"
_SENTINEL_LINE = re.compile(
    r"^([ \t]*)__fleet_merge_(\d+)_(ours|base|sep|theirs|raw)__[ \t]*(\r?\n|$)", re.MULTILINE
)
_MARKERS = {
    "ours": "<<<<<<< ours",
    "base": "||||||| base",
    "sep": "=======",
    "theirs": ">>>>>>> theirs",
}
_MARKER_PREFIXES = {"<" * 7, "|" * 7, "=" * 7, ">" * 7}
Stmts = Sequence[cst.BaseStatement]
Maps = list[dict[Key, cst.BaseStatement]]


class Unsure(FleetError):
    """Internal: the structural stage cannot decide; the caller keeps the line merge."""


@dataclass
class Context:
    profile: LanguageProfile
    module: cst.Module
    conflicts: int = 0
    depth: int = 0  # 0 while merging the module's own members
    ordered_fields: bool = False  # inside a class whose attributes' order is meaning
    raw: dict[int, str] = field(default_factory=dict)

    def raw_conflict(self, marked: str) -> list[cst.BaseStatement]:
        """A symbol's own line-merge conflict: git's markers, indented where the sentinel is."""
        number = self.conflicts
        self.conflicts += 1
        self.raw[number] = marked
        name = f"{SENTINEL}{number}_raw__"
        return [cst.SimpleStatementLine(body=[cst.Expr(cst.Name(name))])]

    def conflict(self, ours: Stmts, base: Stmts, theirs: Stmts) -> list[cst.BaseStatement]:
        """The three sides between sentinel statements, turned into markers after rendering."""
        number = self.conflicts
        self.conflicts += 1

        def mark(role: str) -> cst.BaseStatement:
            return cst.SimpleStatementLine(
                body=[cst.Expr(cst.Name(f"{SENTINEL}{number}_{role}__"))]
            )

        return [mark("ours"), *ours, mark("base"), *base, mark("sep"), *theirs, mark("theirs")]


def render_markers(text: str, raw: dict[int, str]) -> str:
    """Sentinel statements -> diff3 marker lines; a ``raw`` one -> git's marker text for it."""

    def marker(match: re.Match[str]) -> str:
        indent, number, role, newline = match.groups()
        if role == "raw":
            return "".join(
                line if line in ("\n", "\r\n") or line[:7] in _MARKER_PREFIXES else indent + line
                for line in raw[int(number)].splitlines(keepends=True)
            )
        return _MARKERS[role] + (newline or "\n")

    return _SENTINEL_LINE.sub(marker, text)
