"""One side only reformatted a run of a class's (or the module's) members that the other side
changed: the other side's change wins, and so does the first side's formatting wherever the
other side left a member as it was.

Both sides' edits of adjacent statements fall in one chunk of the diff3: manim `fed7ba5e5dbb`,
theirs put two ``@overload`` stubs' ``...`` on their signatures' lines (black 24), ours changed
the implementation's signature just below them. The chunk went to ours whole, the two stubs
back in base's form: theirs' edit of them lost, though ours never touched them.

Members only: in a function's statements the humans keep one side's lines for the whole chunk
(on the thirty-fourth set, four of five results that mixed the two were further from theirs),
and so does the merge (``tests/fixtures/merge/quotes_vs_edit``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

import libcst as cst

from fleet.merge._pykeys import code, formatting_only

__all__ = ["reformatted", "with_formatting"]

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

