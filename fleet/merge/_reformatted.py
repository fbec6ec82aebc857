"""One side only reformatted a run of a class's (or the module's) members that the other side
changed: the other side's change wins, and so does the first side's formatting wherever the
other side left a member as it was.

Both sides' edits of adjacent statements fall in one chunk of the diff3: manim `fed7ba5e5dbb`,
theirs put two ``@overload`` stubs' ``...`` on their signatures' lines (black 24), ours changed
the implementation's signature just below them. The chunk went to ours whole, the two stubs
back in base's form: theirs' edit of them lost, though ours never touched them.

Members only: in a function's statements the humans keep one side's lines for the whole chunk
(on the thirty-fourth set, four of five results that mixed the two were further from theirs),
and so does the merge (``tests/fixtures/merge/quotes_vs_edit``), with two exceptions: the two
sides' edits in different statements whose lines git itself merges cleanly (:func:`apart`:
each kept where it was made), and a compound statement both changed that merges inside without
a conflict (:func:`within_blocks`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

import libcst as cst

from fleet.merge._context import Context, Maps
from fleet.merge._diff3 import compose_disjoint, diff3
from fleet.merge._pykeys import Key, code, formatting_only
from fleet.merge._sets import import_after_deletion

__all__ = [
    "after_deletion",
    "apart",
    "formatted_keys",
    "formatted_members",
    "reformatted",
    "reformatting",
    "with_formatting",
    "within_blocks",
]

T = TypeVar("T")


def reformatted(base: Sequence[cst.CSTNode], side: Sequence[cst.CSTNode]) -> bool:
    """Does ``side`` hold ``base``'s statements one for one, each only reformatted (blank
    lines, quotes, wrapping; comments unchanged)? Then the other side's change of them wins,
    a deletion included (werkzeug 3b79230cfd99: a blank line dropped inside an ``if`` that the
    other side deleted)."""
    return (
        bool(base)
        and len(base) == len(side)
        and all(formatting_only(b, s) for b, s in zip(base, side, strict=True))
    )


def reformatting(parts: tuple[list[Key], ...], maps: Maps) -> int:
    """Of a chunk of members (``parts``: base's, ours', theirs' keys), the side whose change
    wins over the other's reformatting (:func:`reformatted`): 1 ours, 2 theirs; 0 for neither."""
    olds = [maps[0][key] for key in parts[0]]
    if reformatted(olds, [maps[1][key] for key in parts[1]]):
        return 2
    return 1 if reformatted(olds, [maps[2][key] for key in parts[2]]) else 0


def formatted_keys(parts: tuple[list[Key], ...], maps: Maps, changing: int) -> list[Key]:
    """:func:`with_formatting` of a chunk of members' keys (``parts``), ``changing`` the side
    whose change wins (:func:`reformatting`)."""
    return with_formatting(parts[0], parts[changing], parts[3 - changing],
                           lambda i, key: maps[(0, changing, 3 - changing)[i]][key])


def formatted_members(
    ctx: Context,
    parts: tuple[list[Key], ...],
    maps: Maps,
    changing: int,
    merge_node: Callable[..., list[cst.BaseStatement]],
) -> list[cst.BaseStatement] | None:
    """A chunk of members (``parts``: keys) that one side only reformatted and the other
    (``changing``) changed one for one, where a member the changing side changed is an unnamed
    statement (keyed by its text, so :func:`with_formatting` can only take it whole): each such
    member merged with the reformatted one by ``merge_node`` (``_members.merge_node``: git's
    line merge where it is clean, each of its conflicts the changing side's lines), kept when
    that is the changing side's program and adds no conflict; each member the changing side
    left as base had it, the reformatted one. ansible-lint ``4691ffe7288f`` (fortieth set):
    theirs reformatted the module's ``if "pytest" in sys.modules:`` block of tests with black,
    ours rewrote two ``raise`` lines in it; the block went to ours whole, theirs' rewrapped
    ``with`` header and emptied blank lines lost where git merges them cleanly. None when no
    member gains."""
    keys_b, keys_c, keys_f = parts[0], parts[changing], parts[3 - changing]
    if not len(keys_b) == len(keys_c) == len(keys_f):
        return None
    out: list[cst.BaseStatement] = []
    gained = False
    for key_b, key_c, key_f in zip(keys_b, keys_c, keys_f, strict=True):
        old, new, other = maps[0][key_b], maps[changing][key_c], maps[3 - changing][key_f]
        if code(new) == code(old):
            out.append(other)
            continue
        if key_c[0] != "anon" or key_c == key_b:
            return None  # a named member: merged by its key as it was
        before = ctx.conflicts
        merged = merge_node(ctx, *((old, new, other) if changing == 1 else (old, other, new)))
        if ctx.conflicts != before or len(merged) != 1 or not formatting_only(new, merged[0]):
            out.append(new)
            continue
        gained = gained or code(merged[0]) != code(new)
        out.append(merged[0])
    return out if gained else None


def after_deletion(
    base: cst.BaseStatement, kept: cst.BaseStatement
) -> list[cst.BaseStatement] | None:
    """A symbol one side deleted and the other kept: nothing if kept unchanged, only
    reformatted (blank lines, quotes, wrapping; comments unchanged) or a ``from`` import that
    only lost names; else ``None`` (delete vs modify: a conflict)."""
    if code(kept) == code(base) or formatting_only(base, kept):
        return []
    return [] if import_after_deletion(base, kept) else None


def with_formatting(
    base: Sequence[T],
    changed: Sequence[T],
    formatted: Sequence[T],
    node: Callable[[int, T], cst.CSTNode],
) -> list[T]:
    """``changed`` (the side whose change wins over ``formatted``'s reformatting of the same
    ``base`` items, one for one: :func:`reformatted`), with ``formatted``'s item in place of
    each of base's that ``changed`` holds as it was (by its text, when that text is base's
    once and ``changed``'s once). ``node`` gives an item's statement: ``node(0, item)`` in base,
    ``1`` in ``changed``, ``2`` in ``formatted``."""
    texts = [code(node(0, item)) for item in base]
    made = [code(node(1, item)) for item in changed]
    once = {text for text, count in Counter(texts).items() if count == 1}
    once &= {text for text, count in Counter(made).items() if count == 1}
    by_text = {text: kept for text, kept in zip(texts, formatted, strict=True) if text in once}
    return [by_text.get(text, item) for text, item in zip(made, changed, strict=True)]




def within_blocks(
    ctx: Context,
    parts: tuple[Sequence[cst.BaseStatement], ...],
    merge_block: Callable[..., cst.BaseStatement | None],
    changing: int,
) -> list[cst.BaseStatement] | None:
    """A chunk of statements (``parts``: base, ours, theirs) that one side only reformatted
    (:func:`reformatted`) and the other (``changing``: 1 ours, 2 theirs) changed, as the
    changing side has it, except that each compound statement (``if``, ``for``, ``with``,
    ``def``...) both sides changed is merged inside by ``merge_block``
    (``_members._merge_block``): compound statements paired in order, of one kind each. None
    when there is none to merge, they do not pair, or a merge inside conflicts (then the chunk
    goes to the changing side whole, as it did). Webob ``8f8fc888c23a``: ours annotated
    ``from_file`` and put a ``# type: ignore`` on an ``if``'s header, theirs took the brackets
    off a tuple assigned in that ``if``'s body; the function went to ours whole and theirs' edit
    was lost. Simple statements stay the changing side's: in a function's statements the
    humans keep one side's lines (see the module's docstring)."""
    base, changed, formatted = parts[0], parts[changing], parts[3 - changing]

    def compound(statements: Sequence[cst.BaseStatement]) -> list[tuple[int, cst.BaseStatement]]:
        return [(i, s) for i, s in enumerate(statements)
                if isinstance(s, cst.BaseCompoundStatement)]

    olds, news = compound(base), compound(changed)
    if not olds or len(olds) != len(news):
        return None
    out, merged = list(changed), False
    for (at_base, old), (at, new) in zip(olds, news, strict=True):
        other = formatted[at_base]
        if type(old) is not type(new) or code(other) == code(old) or code(new) == code(old):
            continue
        before = ctx.conflicts
        # the changing side in theirs' place whichever it is: where both sides only reformatted
        # one statement, the merge takes theirs' (the formatting side adds nothing to order)
        block = merge_block(ctx, old, other, new, members=False)
        if block is None or ctx.conflicts != before or not formatting_only(new, block):
            return None  # (the merge inside must be the changing side's program, comments too)
        out[at], merged = block, True
    return out if merged else None


def apart(parts: tuple[Sequence[cst.BaseStatement], ...], changing: int
          ) -> list[cst.BaseStatement] | None:
    """A chunk of statements (``parts``: base, ours, theirs) that one side only reformatted
    and the other (``changing``: 1 ours, 2 theirs) changed, each side's edits kept in the
    statements it made them in, when those are different statements whose lines also merge
    cleanly line by line (where git would keep both, so does this stage); else None.
    Django-taggit ``6b6120bcf913``: theirs requoted a ``setdefault`` in one loop, ours rewrote
    the next loop, three lines below; the chunk went to ours whole and theirs' edit was lost
    where git's own merge kept it."""
    texts = [[code(node) for node in part] for part in parts]
    lines = ["".join(text).splitlines(keepends=True) for text in texts]
    if any(chunk.kind == "conflict" for chunk in diff3(*lines)):
        return None
    composed = compose_disjoint(*texts)
    if composed is None:
        return None
    by_side = {"base": parts[0], "ours": parts[1], "theirs": parts[2]}
    merged = [by_side[side][index] for side, index in composed]
    changed = parts[changing]
    if len(merged) != len(changed) or not all(
        formatting_only(mine, kept) for mine, kept in zip(changed, merged, strict=True)
    ):
        return None  # the changing side's program, statement for statement, or nothing
    return merged
