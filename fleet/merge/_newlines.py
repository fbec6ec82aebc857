"""The line endings of a clean structural result, merged as a property of the whole file: where
one side converted every line to one ending (all ``\\n`` where base had ``\\r\\n`` lines, or all
``\\r\\n`` where base had ``\\n`` lines) and the other side did not convert, the result takes the
converting side's ending on every line. From the fortieth unseen set (astroid
``94159d53d260``, the test module of its objects: ours converted the file to ``\\n``,
theirs added a test in base's ``\\r\\n``; the merge kept the test's eleven lines in ``\\r\\n``
among ours' ``\\n`` lines; the humans' file has none). Python reads both endings alike, also
inside string literals, so only the bytes change."""

from __future__ import annotations

from typing import Literal

__all__ = ["follow_newlines"]

Ending = Literal["lf", "crlf", "mixed", "none"]


def _ending(text: str) -> Ending:
    lines = text.count("\n")
    crlf = text.count("\r\n")
    if not lines:
        return "none"
    if not crlf:
        return "lf"
    return "crlf" if crlf == lines else "mixed"


def _converted(base: Ending, side: Ending) -> Ending | None:
    """The ending ``side`` converted the whole file to, or None."""
    if side in ("lf", "crlf") and base not in ("none", side):
        return side
    return None


def follow_newlines(base: str, ours: str, theirs: str, merged: str) -> str:
    """``merged`` with the line endings one side alone converted the file to (see above)."""
    if not any("\r" in text for text in (base, ours, theirs)):
        return merged
    was = _ending(base)
    left, right = _converted(was, _ending(ours)), _converted(was, _ending(theirs))
    to = left if right is None else right if left is None else left if left == right else None
    if to is None or _ending(merged) == to:
        return merged
    plain = merged.replace("\r\n", "\n")
    return plain if to == "lf" else plain.replace("\n", "\r\n")
