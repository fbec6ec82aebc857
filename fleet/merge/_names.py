"""Which names some statements use: a guard of ``merge_statements`` (fleet.merge._members) against
composing one side's new statement with the other side's edit of the code it was written for."""

from __future__ import annotations

import ast
import io
import keyword
import textwrap
import tokenize

from fleet import pyast

__all__ = ["added_alike", "names_in", "rebinds_what_other_uses", "uses_what_other_removed"]


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


def _targets_and_reads(texts: list[str]) -> tuple[set[str], set[str]] | None:
    """What some statements assign (names, ``self.x``) and what they read, as source text; None
    when one does not parse on its own."""
    bound: set[str] = set()
    read: set[str] = set()
    for text in texts:
        try:
            tree = pyast.parse(textwrap.dedent(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.Attribute):
                (bound if isinstance(node.ctx, ast.Store) else read).add(ast.unparse(node))
            elif isinstance(node, ast.AugAssign):
                read.add(ast.unparse(node.target))
    return bound, read


def added_alike(parts: list[list[str]]) -> bool:
    """Both sides' edits of one run of statements bring in the same new code (at least two
    identifiers or string literals that the run's base statements do not have, half the new ones
    of the side with fewer; ``self``/``cls`` not counted) and one side's new statements assign
    what the other side's new statements read. Composing them applies one change twice, made
    one way by each side (isort ``e70653f984e4``: ``cont_line += ","`` and a ``"\\n"``
    appended on one side before a ``return`` that the other side rewrote to format in the same
    ``","`` and ``"\\n"`` on the same conditions). Two statements each wrapped in the same new
    condition, one by each side, share new code but not what they assign and read (black
    ``653248558523``: ``if self.mode.preview:`` around two neighbouring assignments)."""
    base, ours, theirs = parts
    kinds = (tokenize.NAME, tokenize.STRING)
    old = names_in(base, kinds) | {"self", "cls"}
    added = [[t for t in side if t not in base] for side in (ours, theirs)]
    new = [names_in(side, kinds) - old for side in added]
    shared = new[0] & new[1]
    if len(shared) < 2 or 2 * len(shared) < min(len(new[0]), len(new[1])):
        return False
    flow_o, flow_t = (_targets_and_reads(side) for side in added)
    if flow_o is None or flow_t is None:
        return True
    return bool(flow_o[0] & flow_t[1] or flow_t[0] & flow_o[1])


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


def rebinds_what_other_uses(parts: list[list[str]], composed: list[tuple[str, int]]) -> bool:
    """In the composed run (``composed``: ``(side, index)`` pairs into ``parts``, the run's
    statements in base, ours and theirs), one side's new statement uses a name that a statement
    the other side changed, placed after it, now binds where the base statement it replaced did
    not: the other side replaced the object the new statement was written to change, and
    composing the two leaves a dead write (jupyterhub ``70dbe2f04989``: ``model['roles'] = ...``
    added before ``model['users'] = ...``, which the other side rewrote to ``model = {...}``, so
    the roles never reach the model). "Uses": reads (a store into ``model[...]`` reads
    ``model``) of what the statement does not bind itself, and what it binds that its own side's
    next statements in the run read; a name it binds for itself alone is its own (yt
    ``230a9b769427``: a new ``for field in ...`` before a loop the other side renamed to ``for
    field, v in ...``). A conflict, never a clean guess; unsure when a statement does not parse
    on its own."""
    base = parts[0]
    sides = {"ours": parts[1], "theirs": parts[2]}
    for at, (side, index) in enumerate(composed):
        if side == "base" or sides[side][index] in base:
            continue
        other = "theirs" if side == "ours" else "ours"
        later = [sides[other][j] for s, j in composed[at + 1:]
                 if s == other and sides[other][j] not in base]
        if not later:
            continue
        flow = _targets_and_reads([sides[side][index]])
        own_next = _targets_and_reads(sides[side][index + 1:])
        after = _targets_and_reads(later)
        before = _targets_and_reads([t for t in base if t not in sides[other]])
        if flow is None or own_next is None or after is None or before is None:
            return True
        uses = (flow[1] - flow[0]) | (flow[0] & own_next[1])
        if (after[0] - before[0]) & uses:
            return True
    return False
