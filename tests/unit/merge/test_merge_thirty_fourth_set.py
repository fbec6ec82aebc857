"""What the thirty-fourth unseen set (jedi, manim, pyinfra, django-extensions, waitress, boto;
7 Dec 2026) showed, from excerpts shaped like the real inputs: one side's reformatting of class
members the other side left as they were is kept beside that side's change of their neighbours
(manim ``fed7ba5e5dbb``), while in a function's body the changing side's lines still win the
chunk whole (``tests/fixtures/merge/quotes_vs_edit``)."""

from __future__ import annotations

from fleet.merge._line import line_merge
from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted

# manim fed7ba5e5dbb (manim/utils/color/core.py): three ``parse`` in one class, two of them
# ``@overload`` stubs, so none is matched by its name alone
COLOR = '''from typing import overload


class ManimColor:
    def from_hsv(self, hsv):
        return hsv

    @overload
    def parse(self, color: int) -> int:
        ...

    @overload
    def parse(self, color: str) -> str:
        ...

    def parse(self, color: int | list[int]) -> object:
        return color


def last():
    return 0
'''
# ours: a method added above the stubs, the implementation's signature changed below them
HSL = "\n    def from_hsl(self, hsl):\n        return hsl\n"
OURS = (
    COLOR.replace("        return hsv\n", "        return hsv\n" + HSL)
    .replace("list[int]", "tuple[int, ...]")
    + "\n\ndef ours_end():\n    return 1\n"
)
# theirs: black 24 put each stub's ``...`` on its signature's line
THEIRS = COLOR.replace("-> int:\n        ...", "-> int: ...").replace(
    "-> str:\n        ...", "-> str: ..."
) + "\n\ndef theirs_end():\n    return 2\n"


def test_stubs_one_side_reformatted_keep_it_beside_the_other_sides_changes() -> None:
    assert isinstance(line_merge(COLOR, OURS, THEIRS), Conflicted)  # (both added at the end)

    result = merge3(COLOR, OURS, THEIRS, "manim/utils/color/core.py")

    assert isinstance(result, Clean) and result.stage == "structural"
    text = result.text
    assert "    def parse(self, color: int) -> int: ...\n" in text  # theirs' format
    assert "    def parse(self, color: str) -> str: ...\n" in text
    assert "-> int:\n        ...\n" not in text and "-> str:\n        ...\n" not in text
    assert "def parse(self, color: int | tuple[int, ...]) -> object:" in text  # ours' change
    assert "    def from_hsl(self, hsl):" in text and text.count("def parse(") == 3


def test_a_stub_both_sides_left_or_ours_changed_stays_ours() -> None:
    # ours changed the first stub as well: ours' text of it, theirs' format of the second only
    ours = OURS.replace("parse(self, color: int) -> int:", "parse(self, color: bool) -> int:")
    result = merge3(COLOR, ours, THEIRS, "manim/utils/color/core.py")

    assert isinstance(result, Clean)
    assert "    def parse(self, color: bool) -> int:\n        ...\n" in result.text
    assert "    def parse(self, color: str) -> str: ...\n" in result.text
    assert result.text.count("def parse(") == 3


def test_in_a_function_the_changing_side_wins_the_chunk_whole() -> None:
    base = "def f(a, b):\n    x = call(a,\n             b)\n    y = other(a, b)\n    return x + y\n"
    theirs = base.replace("call(a,\n             b)", "call(a, b)")
    ours = base.replace("other(a, b)\n    return x + y", "other(b, a)\n    z = 1\n    return z")
    assert isinstance(line_merge(base, ours, theirs), Conflicted)

    result = merge3(base, ours, theirs, "m.py")

    assert isinstance(result, Clean) and result.text == ours
