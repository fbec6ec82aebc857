"""Setting aside unchanged segments before libcst parses: exact round trip, same merge."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fleet.merge import Clean
from fleet.merge._context import render_markers as _render_markers
from fleet.merge._python import _in_conflict, _merge_texts, structural_merge
from fleet.merge._reduce import PLACEHOLDER_LINE, expand, reduce_unchanged, segments
from fleet.merge.profile import PYTHON

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "merge"
TRICKY = '''#!/usr/bin/env python
"""Doc."""
import os; import sys


@decorator(
    1,
)
def f():
    return 1
    # trailing comment inside f


class C:
    """Class doc."""

    x = 1

    def m(self):
        return 2

    # comment before n
    def n(self): return 3
if True: pass
# footer
'''


def test_segments_cover_the_text_exactly() -> None:
    parts = segments(TRICKY)
    assert parts is not None
    assert "".join(s.text for s in parts) == TRICKY
    assert [(s.kind, s.name) for s in parts] == [
        ("docstring", ""),
        ("anon", ""),
        ("def", "f"),
        ("class", "C"),
        ("anon", ""),
        ("anon", ""),
    ]
    klass = parts[3]
    assert "".join(m.text for m in klass.members) == klass.text
    assert [(m.kind, m.name) for m in klass.members] == [
        ("header", ""),
        ("docstring", ""),
        ("assign", "x"),
        ("def", "m"),
        ("def", "n"),
    ]
    assert klass.members[0].text == "    # trailing comment inside f\n\n\nclass C:\n"
    assert klass.members[4].text.startswith("\n    # comment before n\n")


def test_reduction_replaces_shared_members_and_expands_back() -> None:
    ours = TRICKY.replace("return 1\n", "return 10\n")
    theirs = TRICKY.replace("return 3", "return 30")
    reduction = reduce_unchanged(TRICKY, ours, theirs)
    assert reduction is not None
    # What the checks read: only what is the same in all three is set aside (C.m, in C).
    assert "    def __fleet_keep_" in reduction.checked[0]
    assert "return 2" not in reduction.checked[0]
    assert "return 10" in reduction.checked[1] and "return 30" in reduction.checked[2]
    for text, original in zip(reduction.checked, (TRICKY, ours, theirs), strict=True):
        assert expand(text, reduction.originals) == original


def test_reduction_sets_aside_what_one_side_changed_for_libcst() -> None:
    ours = TRICKY.replace("return 1\n", "return 10\n")  # f: ours only
    theirs = TRICKY.replace("return 3", "return 30")  # C: theirs only
    reduction = reduce_unchanged(TRICKY, ours, theirs)
    assert reduction is not None
    assert len(reduction.sides) == 2
    # libcst parses the same placeholders in all three: nothing left to merge in f or C.
    assert len(set(reduction.texts)) == 1
    assert "def f" not in reduction.texts[0] and "class C" not in reduction.texts[0]
    for index, original in enumerate((TRICKY, ours, theirs)):
        own = {name: texts[index] for name, texts in reduction.sides.items()}

        def side(match: re.Match[str], own: dict[str, str] = own) -> str:
            return own.get(match.group(1), match.group(0))  # shared ones: the second pass

        text = PLACEHOLDER_LINE.sub(side, reduction.texts[index])
        assert expand(text, reduction.originals) == original
    merged = expand(reduction.expand_sides(reduction.texts[0]), reduction.originals)
    assert merged == TRICKY.replace("return 1\n", "return 10\n").replace("return 3", "return 30")
    result = structural_merge(TRICKY, ours, theirs, PYTHON)
    assert isinstance(result, Clean) and result.text == merged


def test_one_sided_member_in_a_conflict_falls_back_to_the_whole_members() -> None:
    """urllib3 ``80dd9f9e4e0b``'s shape: theirs moves ``f`` (which only ours changed) into a
    region both sides changed; inside the conflict each side must show its own ``f``."""
    guarded = "try:\n    import a\nexcept ImportError:\n    a = None\n"
    f, rest = "\n\ndef f():\n    return 1\n", "\n\ndef g():\n    return 2\n"
    base = guarded + "from m import x\n" + f + rest
    ours = guarded.replace("None", "0") + "from m import x\n" + f.replace("1", "10") + rest
    theirs = guarded.replace("None", "1") + f + "from m import x\n" + rest
    reduction = reduce_unchanged(base, ours, theirs)
    assert reduction is not None and reduction.sides  # f: set aside for libcst at first
    merged = _merge_texts(*reduction.texts, PYTHON)
    assert merged is not None and _in_conflict(merged[0], reduction.sides)
    full = _merge_texts(base, ours, theirs, PYTHON)
    result = structural_merge(base, ours, theirs, PYTHON)
    assert full is not None and result is not None
    got = result.text if isinstance(result, Clean) else result.text_with_markers
    assert got == _render_markers(*full)
    theirs_part = "=======\ntry:\n    import a\nexcept ImportError:\n    a = 1\n\n\ndef f():\n"
    assert theirs_part + "    return 1\n>>>>>>> theirs\n" in got


def test_reduction_refuses_unsafe_inputs() -> None:
    assert reduce_unchanged("x = 1\r\n", "x = 1\r\ny = 2\r\n", "x = 1\r\n") is None
    taken = "__fleet_keep_0__ = 1\n"
    assert reduce_unchanged(taken, taken + "a = 1\n", taken) is None
    assert reduce_unchanged("def f(:\n", "x = 1\n", "y = 1\n") is None


@pytest.mark.parametrize(
    "name", sorted(p.name for p in CORPUS.iterdir() if (p / "base.py").is_file())
)
def test_reduced_merge_equals_full_merge(name: str) -> None:
    texts = [(CORPUS / name / f"{part}.py").read_text() for part in ("base", "ours", "theirs")]
    full = _merge_texts(*texts, PYTHON)
    reduced = structural_merge(*texts, PYTHON)
    if full is None:
        assert reduced is None
        return
    assert reduced is not None
    got = reduced.text if isinstance(reduced, Clean) else reduced.text_with_markers
    assert got == _render_markers(*full)


def test_a_member_without_its_line_end_is_not_set_aside_for_one_side() -> None:
    """redis-py ``0cdeebf6ce64``'s shape: theirs drops the file's last line end after ``g``,
    ours appends a class after ``g``: ``g``'s text without its line end, put back before the
    class, would join the lines."""
    base = "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
    ours = base.replace("return 1", "return 10") + "\n\nclass C:\n    pass\n"
    theirs = base[:-1]
    reduction = reduce_unchanged(base, ours, theirs)
    assert reduction is not None
    assert [reduction.changed(name) for name in reduction.sides] == [
        "\n\ndef f():\n    return 10\n"
    ]
    result = structural_merge(base, ours, theirs, PYTHON)
    assert isinstance(result, Clean)
    assert "return 10\n\n\ndef g():\n    return 2\n\n\nclass C:\n" in result.text


FLAGS = '''import os


class T(object):
    #
    #  a   first flag
    #  b   second flag
    #  z   last flag
    #
    a = 0
    b = 0
    z = 0

    def f(self):
        return 1

    def g(self):
        return 2
'''


def test_a_set_aside_member_inside_gits_own_conflict_text_is_put_back() -> None:
    """cython 6953f90bfe5b: both sides edited one line of the comment block heading a class, so
    the class's first statement (its leading comments and ``is_pyobject = 0``, set aside) kept
    git's conflict text, made from the texts with placeholders; the result held
    ``__fleet_keep_301__ = 0`` (a number that also changed from run to run) instead of the
    statement."""
    ours = FLAGS.replace("#  b   second flag", "#  b   the second flag").replace(
        "return 1", "return 10") + "\n    def h1(self):\n        return 11\n"
    theirs = FLAGS.replace("#  b   second flag", "#  b   second flag, or None").replace(
        "    #  z   last flag\n", "").replace("return 2", "return 20") + (
        "\n    def h2(self):\n        return 22\n")
    result = structural_merge(FLAGS, ours, theirs, PYTHON)
    assert result is not None and not isinstance(result, Clean), result
    text = result.text_with_markers
    assert "__fleet_keep" not in text
    assert "#  b   the second flag" in text and "#  b   second flag, or None" in text
    assert "    #\n    a = 0\n    b = 0\n    z = 0\n" in text
    assert "return 10" in text and "return 20" in text and "h1" in text and "h2" in text
