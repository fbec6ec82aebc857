"""One line one side only respaced (its words and signs base's, the spaces between them not)
and the other side rewrote: the rewrite, with the first side's spaces wherever the rewrite kept
two of base's words (or words in their places) next to each other with base's spaces between
them. From the fortieth unseen set (astroid ``c39599ad4f32``, ``astroid/manager.py``: theirs
took a doubled space out of ``for  infered in modastroid.igetattr(name):``, ours renamed
``infered`` on that line; the line went to ours whole, the doubled space back). Used for a
compound statement's header (``_pytext.header_merge``); spaces inside a string literal change
the program, so a result is kept only when it is the rewriting side's program."""

from __future__ import annotations

import ast
import re
from difflib import SequenceMatcher

from fleet import pyast

__all__ = ["respaced", "respaced_lines", "same_words"]

_PIECE = re.compile(r"\s+|\w+|[^\w\s]")


def _split(line: str) -> tuple[list[str], list[str]]:
    """A line's words and signs, and the spaces before each of them and after the last (one
    more than the words)."""
    words: list[str] = []
    gaps: list[str] = [""]
    for piece in _PIECE.findall(line):
        if piece.isspace():
            gaps[-1] += piece
        else:
            words.append(piece)
            gaps.append("")
    return words, gaps


def same_words(one: str, other: str) -> bool:
    """Do the two texts differ in their spaces alone (line breaks included)?"""
    return _split(one)[0] == _split(other)[0]


def respaced(base: str, changed: str, spaced: str) -> str | None:
    """``changed`` with ``spaced``'s spaces where it kept base's (see the module docstring);
    None when ``spaced`` changed more than spaces or the result is ``changed`` itself."""
    words_b, gaps_b = _split(base)
    words_c, gaps_c = _split(changed)
    words_s, gaps_s = _split(spaced)
    if words_s != words_b or gaps_s == gaps_b:
        return None
    # each of changed's words in the place of one of base's (the same word, or one word
    # rewritten in its place), by position: word index in changed -> in base
    same: dict[int, int] = {}
    matcher = SequenceMatcher(None, words_b, words_c, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(i2 - i1):
                same[j1 + k] = i1 + k
    gaps = list(gaps_c)
    for at in range(len(gaps_c)):
        # the gap before word ``at`` (the last gap: after the last word)
        here = same.get(at) if at < len(words_c) else (len(words_b) if words_c else None)
        before = same.get(at - 1) if at > 0 else -1
        if at == len(words_c) and at > 0 and same.get(at - 1) != len(words_b) - 1:
            continue
        if here is None or before is None or here != before + 1:
            continue
        if gaps_c[at] == gaps_b[here]:
            gaps[at] = gaps_s[here]
    out = "".join(gap + word for gap, word in zip(gaps, words_c, strict=False)) + gaps[-1]
    return None if out == changed else out


def respaced_lines(base: str, changed: str, spaced: str) -> str | None:
    """``changed`` (a compound statement's header one side rewrote) with the other side's
    respacing of it (``spaced``: base's words, other spaces), line by line: each line the
    rewrite left as base had it, ``spaced``'s; each it rewrote, :func:`respaced`. None unless the
    three have as many lines and the result parses to ``changed``'s program."""
    lines = [text.splitlines(keepends=True) for text in (base, changed, spaced)]
    if not len(lines[0]) == len(lines[1]) == len(lines[2]):
        return None
    out = [other if new == old else (respaced(old, new, other) or new)
           for old, new, other in zip(*lines, strict=True)]
    text = "".join(out)
    try:
        same = ast.dump(pyast.parse(text)) == ast.dump(pyast.parse(changed))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text if same else None
