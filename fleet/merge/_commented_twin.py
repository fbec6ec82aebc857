"""Whole-result check, from the thirty-ninth unseen set (7 Dec 2026): one line both sides added
at one place, live on one side and commented out on the other, kept both ways (pyflakes
``a3e40d91f382``, ``pyflakes/checker.py``: ours added ``g.trace(node.__class__.__name__)
###`` to ``handleFields``, theirs the same line as ``### g.trace(...)``; the merge kept the
live call above its commented-out copy, so the trace theirs had turned off runs on every call).
Whether the line runs is the one thing the two sides disagree on: the file conflicts.

A *twin* is a comment line directly above or below a line of code whose text, once the comment
marks are taken off, is that code (its own trailing comment left out), of at least
:data:`LEAST_CHARS` characters; the result may hold no more twins than its inputs do."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["LEAST_CHARS", "live_and_commented"]

LEAST_CHARS = 12  # below it (``pass``, ``x = 1``), equal text is a coincidence
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


def twins(text: str) -> int:
    """How many comment lines of ``text`` repeat the code of the line above or below them."""
    lines = text.splitlines()
    count = 0
    for i, line in enumerate(lines):
        inside = _commented(line)
        if inside is None or len(inside) < LEAST_CHARS:
            continue
        near = (lines[j] for j in (i - 1, i + 1) if 0 <= j < len(lines))
        count += any(_code(other) == inside for other in near)
    return count


def live_and_commented(texts: Sequence[str]) -> str | None:
    """``texts``: base, ours, theirs, result (see the module docstring)."""
    if twins(texts[3]) > max(twins(text) for text in texts[:3]):
        return "one line kept both live and commented out (each side's way)"
    return None
