"""A diff3 over sequences of hashable tokens (symbol keys, statement texts).

The structural stage uses it where the unit is a syntax node, not a line: the module's and a
class's members (tokens = symbol identities) and a function's statements (tokens = their text).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise
from typing import Any, Literal

__all__ = [
    "Chunk",
    "ChunkKind",
    "ascending",
    "both_inserted",
    "compose_disjoint",
    "covered",
    "diff3",
]

ChunkKind = Literal["stable", "ours", "theirs", "both", "conflict"]


@dataclass(frozen=True)
class Chunk:
    """Aligned half-open index ranges ``[start, end)`` into base, ours and theirs.

    ``stable``: all three equal; ``ours``/``theirs``: only that side changed it (take it);
    ``both``: both sides made the same change; ``conflict``: both changed it differently.
    """

    kind: ChunkKind
    base: tuple[int, int]
    ours: tuple[int, int]
    theirs: tuple[int, int]


def _matches(base: Sequence[Hashable], other: Sequence[Hashable]) -> dict[int, int]:
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    mapping: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            mapping[block.a + offset] = block.b + offset
    return mapping


def diff3(
    base: Sequence[Hashable], ours: Sequence[Hashable], theirs: Sequence[Hashable]
) -> list[Chunk]:
    """Chunks covering the three sequences in order; anchors are tokens matched on both sides."""
    in_ours = _matches(base, ours)
    in_theirs = _matches(base, theirs)
    anchors = [i for i in range(len(base)) if i in in_ours and i in in_theirs]
    chunks: list[Chunk] = []
    prev_b, prev_o, prev_t = 0, 0, 0

    def gap(end_b: int, end_o: int, end_t: int) -> None:
        b, o, t = (prev_b, end_b), (prev_o, end_o), (prev_t, end_t)
        if end_b == prev_b and end_o == prev_o and end_t == prev_t:
            return
        base_part = list(base[prev_b:end_b])
        ours_part = list(ours[prev_o:end_o])
        theirs_part = list(theirs[prev_t:end_t])
        if ours_part == base_part:
            kind: ChunkKind = "theirs"
        elif theirs_part == base_part:
            kind = "ours"
        elif ours_part == theirs_part:
            kind = "both"
        else:
            kind = "conflict"
        chunks.append(Chunk(kind, b, o, t))

    for index in anchors:
        o_index, t_index = in_ours[index], in_theirs[index]
        if o_index < prev_o or t_index < prev_t:
            continue  # matching blocks are monotonic; this guards crossings all the same
        gap(index, o_index, t_index)
        chunks.append(
            Chunk("stable", (index, index + 1), (o_index, o_index + 1), (t_index, t_index + 1))
        )
        prev_b, prev_o, prev_t = index + 1, o_index + 1, t_index + 1
    gap(len(base), len(ours), len(theirs))
    return chunks


def _changes(base: Sequence[Hashable], side: Sequence[Hashable]) -> list[tuple[int, int, int, int]]:
    matcher = SequenceMatcher(None, base, side, autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _beside(point: int, start: int, end: int, new_length: int) -> bool:
    """May an insertion at ``point`` compose with the other side's change of ``[start, end)``
    into ``new_length`` tokens? Only outside it, and at its edge only if that change inserts
    nothing itself (a one-for-one rewrite): an insertion hidden in a growing change could be the
    same addition made twice."""
    if point < start or point > end:
        return True
    return point in (start, end) and new_length == end - start


def _inert(items: Sequence[Hashable]) -> bool:
    """Lines that are blank or only a comment (items of a line merge)."""
    return all(isinstance(item, str) and item.strip()[:1] in ("", "#") for item in items)


def _new_code(base: Sequence[Hashable], side: Sequence[Hashable]) -> set[int]:
    """Indices of the items ``side`` inserted into ``base``, in runs that hold more than blank
    or comment lines (a blank line both sides added is no shared code: click 73cfe126d82f)."""
    matcher = SequenceMatcher(None, base, side, autojunk=False)
    return {
        index
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag == "insert" and not _inert(side[j1:j2])
        for index in range(j1, j2)
    }


def _holds(
    base: Sequence[Hashable],
    holder: Sequence[Hashable],
    other: Sequence[Hashable],
    deletions: bool,
) -> bool:
    """Does ``holder`` make every change ``other`` makes, and more? ``other`` only rewrote base
    items one for one, inserted items and (if ``deletions``) deleted items; every item it
    deleted ``holder`` deleted too, not rewrote (one side deleting a block the other edited is
    no holding: httpx ``0f2cf9849207``); from ``other`` to ``holder`` only insertions and
    rewrites or deletions of items ``other`` kept from the base; and no base item ``other``
    rewrote or deleted is anywhere in ``holder``."""
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    gone: list[int] = []
    deleted: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 != j2 - j1:
            return False
        if tag in ("replace", "delete"):
            gone.extend(range(i1, i2))
        if tag == "delete":
            if not deletions:
                return False
            deleted.extend(range(i1, i2))
    if deleted:
        matcher = SequenceMatcher(None, base, holder, autojunk=False)
        dropped = {
            index
            for tag, i1, i2, _, _ in matcher.get_opcodes()
            if tag == "delete"
            for index in range(i1, i2)
        }
        if not dropped.issuperset(deleted):
            return False
    from_base = set(_matches(base, other).values())
    inserted = _new_code(base, other)
    matcher = SequenceMatcher(None, other, holder, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete") and not all(i in from_base for i in range(i1, i2)):
            return False  # a change of ``other``'s own is not in ``holder``
        if j2 - j1 > i2 - i1 and inserted & {i1 - 1, i2} and not _inert(holder[j1:j2]):
            # Both sides added the same new code, ``holder``'s version longer: which one is the
            # later is a guess (a backport, the extra lines added since or dropped since; the
            # humans took the shorter in pydantic 4583b6de819b, scrapy 0b74ea0ee536,
            # 26c1642b90b0, 5c69a73d0e02, the longer in httpx ebd7939caa9d, black
            # 7b3fd6a83a09). Extra blank or comment lines change no program.
            return False
    # By value, not by alignment: an item ``other`` changed and ``holder`` moved is still there;
    # so is one ``holder`` only gave a trailing comma (holoviews ``8e5e7747e89d``: ours replaced
    # a dict's last entry, theirs added the same new entry below it with a comma after it).
    return not {_bare(base[index]) for index in gone} & {_bare(item) for item in holder}


def _bare(item: Hashable) -> Hashable:
    """A line without its indentation, trailing comma and spaces; any other item as it is."""
    return item.strip().removesuffix(",").rstrip() if isinstance(item, str) else item


def covered(
    base: Sequence[Hashable],
    ours: Sequence[Hashable],
    theirs: Sequence[Hashable],
    deletions: bool = True,
) -> list[tuple[str, int]] | None:
    """One side's edit of a run holds all of the other side's (``_holds``): the same edit made
    by both, more by one (httpx ``64fd48eaa2ae``: ``self.backend = lookup_backend(backend)``
    written by both sides, one also renaming ``self.http_2`` on the line above; werkzeug
    ``b69901bf72a8``: a link fixed by both, a ``deprecated`` note added below it by one). That
    side's run is the merge. Not when the two are equal or either is the base's. Items are
    statements, elements or decorators; for lines (``deletions=False``) a deletion on the other
    side is never held: lines deleted from a statement the holder deleted whole are an edit of
    it (sanic ``055ad6bd6d13``: a test's last lines dropped on one side, the test on the
    other)."""
    if list(ours) == list(theirs) or list(base) in (list(ours), list(theirs)):
        return None
    for name, side, other in (("ours", ours, theirs), ("theirs", theirs, ours)):
        if _holds(base, side, other, deletions):
            return [(name, index) for index in range(len(side))]
    return None


def compose_disjoint(
    base: Sequence[Hashable],
    ours: Sequence[Hashable],
    theirs: Sequence[Hashable],
    *,
    one_point: Callable[[Sequence[Any], Sequence[Any]], bool] | None = None,
) -> list[tuple[str, int]] | None:
    """Merge a conflicting gap when the two sides change *different* base tokens, or when one
    side's edit holds the other's (``covered``: the same edit made by both, more by one).

    Each side's changes are ranges of base tokens; changes of disjoint ranges compose even when
    adjacent (git would conflict on the touching lines), and an insertion at the edge of the
    other side's change goes on that edge (see :func:`_beside`). Overlaps, an insertion inside
    the other side's change and two insertions at one point are unsure: return ``None``, unless
    ``one_point(ours' inserted items, theirs')`` says their order does not matter (ours' go
    first then). Otherwise return the merged sequence as ``(side, index)`` pairs, side in
    ``base | ours | theirs``.
    """
    ours_changes = _changes(base, ours)
    theirs_changes = _changes(base, theirs)
    for o1, o2, p1, p2 in ours_changes:
        for t1, t2, q1, q2 in theirs_changes:
            if o1 == o2 and t1 == t2:
                if o1 == t1 and not (one_point and one_point(ours[p1:p2], theirs[q1:q2])):
                    # Both insert at one point: their order is unknown
                    return covered(base, ours, theirs)  # unless one holds the other's
            elif o1 == o2:
                if not _beside(o1, t1, t2, q2 - q1):
                    return None
            elif t1 == t2:
                if not _beside(t1, o1, o2, p2 - p1):
                    return None
            elif max(o1, t1) < min(o2, t2):
                return covered(base, ours, theirs)
    edits = sorted(
        [(i1, i2, "ours", j1, j2) for i1, i2, j1, j2 in ours_changes]
        + [(i1, i2, "theirs", j1, j2) for i1, i2, j1, j2 in theirs_changes]
    )
    merged: list[tuple[str, int]] = []
    position = 0
    for i1, i2, side, j1, j2 in edits:
        merged.extend(("base", index) for index in range(position, i1))
        merged.extend((side, index) for index in range(j1, j2))
        position = max(position, i2)
    merged.extend(("base", index) for index in range(position, len(base)))
    sources = {"base": base, "ours": ours, "theirs": theirs}
    counts = Counter(sources[side][index] for side, index in merged)
    if any(n > max(list(ours).count(item), list(theirs).count(item)) for item, n in counts.items()):
        # An item both sides added, once each (one rewriting a run, the other inserting beside
        # it), would be there twice (bokeh 2634352f4770: two ``print`` lines ours rewrote and
        # theirs inserted above the originals).
        return None
    return merged


def _lead(item: str) -> str:
    match = re.match(r"[A-Za-z0-9_.]+", item.strip())
    return match.group(0).lower() if match else item


def ascending(
    base: Sequence[str], ours: Sequence[str], theirs: Sequence[str], chunk: Chunk
) -> bool:
    """A list kept in sorted order, so that both sides' insertions at the point ``chunk`` go in
    that order: in each version at least nine in ten neighbours ascend (a list sorted but for a
    slip, scipy ``_generate_pyx.py``: ``"pdtrc", "pbdv"``; four items at least), and every item
    the two sides inserted lies between the base items around the point."""
    for items in (base, ours, theirs):
        pairs = list(pairwise(items))
        if len(items) < 4 or sum(a < b for a, b in pairs) < 0.9 * len(pairs):
            return False
    start, end = chunk.base
    inserted = [*ours[slice(*chunk.ours)], *theirs[slice(*chunk.theirs)]]
    low = base[start - 1] if start > 0 else None
    high = base[end] if end < len(base) else None
    return all((low is None or low < item) and (high is None or item < high) for item in inserted)


def both_inserted(
    base: Sequence[str], ours: Sequence[str], theirs: Sequence[str], in_order: bool = False
) -> list[tuple[str, int]] | None:
    """For the items of a list of strings: both sides inserted items at one point and changed
    nothing else there. Ours' come first, then theirs' (as ``compose_disjoint`` returns them),
    unless two of them start with one name (``"pytest>=7"`` and ``"pytest>=8"``: one requirement
    changed two ways, not two requirements). With ``in_order`` (a list kept sorted, see
    :func:`ascending`) the two runs are merged in sorted order (scipy ``6cc194deeea7``:
    ``"erfinv"`` and ``"eval_jacobi"``, ``"eval_sh_jacobi"`` added after ``"erfi"``)."""
    leads = [_lead(item) for item in (*ours, *theirs)]
    if base or not ours or not theirs or len(set(leads)) != len(leads):
        return None
    merged = [("ours", index) for index in range(len(ours))] + [
        ("theirs", index) for index in range(len(theirs))
    ]
    if in_order:
        items = {"ours": ours, "theirs": theirs}
        merged.sort(key=lambda pair: items[pair[0]][pair[1]])
    return merged
