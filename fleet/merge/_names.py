"""Which names some statements use: a guard of ``merge_statements`` (fleet.merge._members) against
composing one side's new statement with the other side's edit of the code it was written for."""

from __future__ import annotations

import io
import keyword
import tokenize

__all__ = ["added_alike", "names_in", "uses_what_other_removed"]


def names_in(texts: list[str], kinds: tuple[int, ...] = (tokenize.NAME,)) -> set[str]:
    """The identifiers (names and attribute names, keywords left out) of some statements, and
    with ``kinds`` other tokens too (string literals)."""
    out: set[str] = set()
    for text in texts:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (tokenize.TokenError, SyntaxError):
            return {"<untokenizable>"}
        out.update(t.string for t in tokens if t.type in kinds)
    return {name for name in out if not keyword.iskeyword(name)}


def added_alike(parts: list[list[str]]) -> bool:
    """Both sides' edits of one run of statements bring in the same new code: at least two
    identifiers or string literals that the run's base statements do not have, half the new
    ones of the side with fewer at least (``self``/``cls`` not counted). Composing them applies
    one change twice, made one way by each side (isort ``e70653f984e4``: ``cont_line += ","``
    and a ``"\n"`` appended on one side before a ``return`` that the other side rewrote to
    format in the same ``","`` and ``"\n"`` on the same conditions)."""
    base, ours, theirs = parts
    kinds = (tokenize.NAME, tokenize.STRING)
    old = names_in(base, kinds) | {"self", "cls"}
    new = [names_in([t for t in side if t not in base], kinds) - old for side in (ours, theirs)]
    shared = new[0] & new[1]
    return len(shared) >= 2 and 2 * len(shared) >= min(len(new[0]), len(new[1]))


def uses_what_other_removed(parts: list[list[str]], bodies: list[list[str]]) -> bool:
    """One side's new statements use a name that the other side's edit of this run removed
    from its whole block (``parts``: the run's statements in base, ours and theirs;
    ``bodies``: each version's whole block): the new statement was written
    for the code the other side changed (httpx aac3740701df: ``assert response.call_next is not
    None`` added before ``response.call_next()``, which the other side made
    ``response.next()``). Composing the two would be a clean guess."""
    base, ours, theirs = parts
    for side, whole in ((ours, bodies[2]), (theirs, bodies[1])):
        new = [text for text in side if text not in base]
        replaced = [text for text in base if text not in side]
        removed = names_in(base) - names_in(whole)
        if (names_in(new) - names_in(replaced)) & removed:
            return True
    return False
