"""Which names some statements use: a guard of ``merge_statements`` (fleet.merge._members) against
composing one side's new statement with the other side's edit of the code it was written for."""

from __future__ import annotations

import io
import keyword
import tokenize

__all__ = ["names_in", "uses_what_other_removed"]


def names_in(texts: list[str]) -> set[str]:
    """The identifiers (names and attribute names, keywords left out) of some statements."""
    out: set[str] = set()
    for text in texts:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (tokenize.TokenError, SyntaxError):
            return {"<untokenizable>"}
        out.update(t.string for t in tokens if t.type == tokenize.NAME)
    return {name for name in out if not keyword.iskeyword(name)}


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
