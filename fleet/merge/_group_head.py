"""A group's head deleted by one side where the other side inserted below it (django-filter
``ced329be1b7f``, ``tests/rest_framework/test_backends.py``): ours added ``import warnings``
between ``import datetime`` and ``from decimal import Decimal``, the first two members of the
standard library's group; theirs deleted both, so theirs' parse hands the group's blank line to
the group's next import, its new head. Merged member by member, ``import warnings`` lost its
blank line with ``import datetime`` and stood straight below ``from __future__ import ...``,
and the blank line stayed above that next import: one side's insertion moved out of its
group.

:class:`GroupHeads` follows one run of :func:`fleet.merge._members.merge_members`: a base member
that the result drops (``deleted``) with blank lines above it (no comment among them), which the
inserting side still has, then the next member that side inserted without blank lines of its own
(``inserted``), then the next member all three have (``kept``) whose merged form carries exactly
those blank lines where base and the inserting side have none. Only then are the lines moved:
the insertion opens the group and the member below it keeps the inserting side's (no) blank
lines. Anything else in between (a conflict, another member kept) forgets the run.

And a member one side replaced (deleted, with a new one in its place) where the other side
changed only the lines above it: the new member takes those lines (``_in_place_of``)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from fleet.merge._context import Maps
from fleet.merge._pykeys import Key, code

__all__ = ["GroupHeads"]


def _blank_lines(node: cst.CSTNode | None) -> tuple[cst.EmptyLine, ...] | None:
    """``node``'s leading lines when there are some and none holds a comment, else None."""
    lines = tuple(getattr(node, "leading_lines", ()))
    if not lines or any(line.comment is not None for line in lines):
        return None
    return lines


def _exact(lines: Sequence[cst.EmptyLine]) -> list[tuple[bool, str, str]]:
    """``lines`` exactly: indented or not, their spaces, their comment (libcst renders a line
    of spaces alone as an empty line)."""
    return [(line.indent, line.whitespace.value, line.comment.value if line.comment else "")
            for line in lines]


def _lines(node: cst.CSTNode) -> list[tuple[bool, str, str]]:
    """The lines above ``node`` exactly (:func:`_exact`)."""
    return _exact(getattr(node, "leading_lines", ()))


def _above(node: cst.CSTNode) -> int:
    """How many lines (blank or comment) ``node`` has above it."""
    return len(getattr(node, "leading_lines", ()))


class GroupHeads:
    """The state of one member run: see the module's docstring."""

    def __init__(self, maps: Maps) -> None:
        self.maps = maps
        self.head: tuple[Key, tuple[cst.EmptyLine, ...]] | None = None  # deleted, its lines
        self.moved: tuple[int, int, tuple[cst.EmptyLine, ...]] | None = None  # out index, side
        self.replaced: tuple[Key, int] | None = None  # deleted, the side that kept it
        self.first = next(iter(maps[0]), None)  # base's first member: its lines follow a header
        self.inserter = 0  # the side whose insertion was emitted last (0: none yet)

    def reset(self) -> None:
        self.head = self.moved = self.replaced = None

    def emitted(self, out: list[cst.BaseStatement], key: Key,
                pieces: list[cst.BaseStatement], side: int) -> None:
        """``key`` goes to the result as ``pieces`` after ``out``; ``side``: who has it, 1 ours,
        2 theirs, 3 both (0: a deletion settled, -1: one settled elsewhere)."""
        if side == -1 or (pieces and side < 1):
            self.reset()
        elif key in self.maps[0] and not pieces:
            self.deleted(key)
        elif key not in self.maps[0] and side in (1, 2) and pieces:
            self.inserted(out, pieces, side)
            self.inserter = side
        elif key in self.maps[0] and side == 3:
            self.kept(out, key, pieces)
        else:
            self.reset()

    def deleted(self, key: Key) -> None:
        """``key``, a base member, is not in the result (nothing emitted: a run goes on)."""
        keeper = 1 if key in self.maps[1] else 2 if key in self.maps[2] else 0
        if keeper and self.replaced is None and key[0] != "anon":  # (named: replaced, not edited)
            self.replaced = (key, keeper)
        if self.head is None and self.moved is None:
            lines = _blank_lines(self.maps[0].get(key))
            if lines is not None:
                self.head = (key, lines)

    def inserted(self, out: Sequence[cst.CSTNode], pieces: list[cst.BaseStatement],
                 side: int) -> None:
        """One side's (1 ours, 2 theirs) new member, ``pieces`` to go at ``len(out)``."""
        if self.replaced is not None and self.replaced[1] != side:
            pieces[0] = self._in_place_of(self.replaced, pieces[0])
            self.replaced = None
        head, self.head, self.moved = self.head, None, None
        if head is None or head[0] not in self.maps[side]:
            return
        if _above(pieces[0]):
            return
        self.moved = (len(out), side, head[1])

    def _in_place_of(self, replaced: tuple[Key, int], node: cst.BaseStatement
                     ) -> cst.BaseStatement:
        """``node``, new where the other side (``replaced[1]``) kept the member the node's side
        replaced (``replaced[0]``) but changed only the lines above it: those lines, when
        ``node`` has base's (dateutil ``44cf98c830be``: theirs put an ``if PY3:`` block and a
        blank line above ``from .__init__ import tzname_in_python2``, ours made it ``from
        ._common import ...``; the blank line went with the deleted import)."""
        key, keeper = replaced
        base, kept = self.maps[0][key], self.maps[keeper][key]
        if (_lines(node) != _lines(base)
                or code(kept.with_changes(leading_lines=[])) != code(
                    base.with_changes(leading_lines=[]))):
            return node
        return node.with_changes(leading_lines=getattr(kept, "leading_lines", ()))

    def _no_longer_first(self, key: Key, node: cst.BaseStatement, inserter: int
                         ) -> cst.BaseStatement:
        """``node``, base's first member, below the other side's insertion: the blank lines
        above it as the inserting side left them, where the other side changed only how many
        blank lines follow the header (rope ``cbd94fcd8b03``: ours took the blank line off
        between ``class _ExtractRefactoring(object):`` and ``def __init__``, theirs put
        ``kind_prefixes = {}`` there; ``__init__`` stood right below the new constant)."""
        base, mine = self.maps[0][key], self.maps[inserter][key]
        if (_lines(mine) != _lines(base) or (_blank_lines(base) is None and _above(base))
                or any(line.comment is not None for line in getattr(node, "leading_lines", ()))):
            return node
        return node.with_changes(leading_lines=getattr(mine, "leading_lines", ()))

    def kept(self, out: list[cst.BaseStatement], key: Key,
             pieces: list[cst.BaseStatement]) -> None:
        """``key``, a member base has, goes to the result as ``pieces`` (after ``out``)."""
        moved, self.head, self.moved, self.replaced = self.moved, None, None, None
        if key == self.first and self.inserter and pieces:
            pieces[0] = self._no_longer_first(key, pieces[0], self.inserter)
        if moved is None or not pieces:
            return
        index, side, lines = moved
        base, mine = self.maps[0].get(key), self.maps[side].get(key)
        if (base is None or mine is None or _blank_lines(pieces[0]) is None
                or _lines(pieces[0]) != _exact(lines)):
            return
        if _above(base) or _above(mine):
            return
        out[index] = out[index].with_changes(leading_lines=list(lines))
        pieces[0] = pieces[0].with_changes(leading_lines=[])
