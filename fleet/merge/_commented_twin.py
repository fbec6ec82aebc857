"""Whole-result check, from the thirty-ninth unseen set (7 Dec 2026): one line both sides added
at one place, live on one side and commented out on the other, kept both ways (pyflakes
``a3e40d91f382``, ``pyflakes/checker.py``: ours added ``g.trace(node.__class__.__name__)
###`` to ``handleFields``, theirs the same line as ``### g.trace(...)``; the merge kept the
live call above its commented-out copy, so the trace theirs had turned off runs on every call).
Whether the line runs is the one thing the two sides disagree on: the file conflicts.
The same for a whole block, from the fortieth (flask-admin ``0ecc2d5c40eb``,
``flask_admin/model/base.py``: theirs added eleven statements to ``details_view``, ours the same
block commented out; the merge kept the live block above the commented one, so the form work
ours had turned off ran on every details page).

A *twin* is a comment line whose text, once the comment marks are taken off, is the code of a
line (its own trailing comment left out) of at least :data:`LEAST_CHARS` characters, at most
:data:`NEAR` lines away in the same block (no line between them indented less than the two);
the result may hold no more twins than its inputs do."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["LEAST_CHARS", "NEAR", "live_and_commented"]

LEAST_CHARS = 12  # below it (``pass``, ``x = 1``), equal text is a coincidence
NEAR = 40  # lines: a commented-out block as long as that beside its live copy still counts
_MARKS = re.compile(r"^\s*#+\s?")
_TRAILING = re.compile(r"\s+#[^'\"]*$")


def _code(line: str) -> str | None:
    """The code of a line of code (its trailing comment off), None for a comment or blank."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    return _TRAILING.sub("", stripped)


def _commented(line: str) -> str | None:
    """The text of a comment line with its marks taken off, None for any other line."""
    if not line.lstrip().startswith("#"):
        return None
    return _TRAILING.sub("", _MARKS.sub("", line).strip()) or None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _same_block(lines: Sequence[str], i: int, j: int) -> bool:
    """No line strictly between ``i`` and ``j`` is indented less than both (blank lines aside)."""
    least = min(_indent(lines[i]), _indent(lines[j]))
    low, high = min(i, j), max(i, j)
    return all(not lines[k].strip() or _indent(lines[k]) >= least for k in range(low + 1, high))


def twins(text: str) -> int:
    """How many comment lines of ``text`` repeat the code of a line near them in their block."""
    lines = text.splitlines()
    where: dict[str, list[int]] = {}
    for j, line in enumerate(lines):
        code = _code(line)
        if code is not None and len(code) >= LEAST_CHARS:
            where.setdefault(code, []).append(j)
    count = 0
    for i, line in enumerate(lines):
        inside = _commented(line)
        if inside is None or inside not in where:
            continue
        count += any(abs(i - j) <= NEAR and _same_block(lines, i, j) for j in where[inside])
    return count


def live_and_commented(texts: Sequence[str]) -> str | None:
    """``texts``: base, ours, theirs, result (see the module docstring)."""
    if twins(texts[3]) > max(twins(text) for text in texts[:3]):
        return "code kept both live and commented out (each side's way)"
    return None
