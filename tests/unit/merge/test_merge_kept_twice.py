"""Text a clean result would hold twice where each side holds it once: a section comment above
both sides' insertions is kept once (``_order.comment_once``; Pillow ``31a8da48eeb1``), one
definition both sides added under two names is a conflict (``_twice.added_under_two_names``; attrs
``870867759952``), and a comment the merge copied is a conflict (``_twice.comments_not_kept``,
the net behind them; scrapy ``2d9857b44127`` copied one 16 times)."""

from __future__ import annotations

import ast

from fleet.merge import Clean, merge3
from fleet.merge._python import structural_merge
from fleet.merge._twice import added_under_two_names, comments_not_kept
from fleet.merge.profile import PYTHON

SECTION = (
    "import os\n"
    "\n"
    "\n"
    "def helper():\n"
    "    return os.sep\n"
    "\n"
    "\n"
    "# --------------------------------------------------------------------\n"
    "# Implementation wrapper\n"
    "\n"
    "\n"
    "class Image:\n"
    "    pass\n"
)
ACCESS = "class PixelAccess:\n    def get(self):\n        return 1\n\n\n"
READER = "class Reader:\n    def read(self):\n        return 2\n\n\n"


def _below_the_section(inserted: str) -> str:
    return SECTION.replace("\n\nclass Image:", "\n\n" + inserted + "class Image:")


def test_a_section_comment_above_both_sides_insertions_is_kept_once() -> None:
    ours, theirs = _below_the_section(ACCESS), _below_the_section(READER)
    result = merge3(SECTION, ours, theirs, "image.py")
    assert isinstance(result, Clean) and result.stage == "structural"
    assert result.text.count("# Implementation wrapper") == 1
    assert result.text == _below_the_section(ACCESS + READER)  # the humans' Pillow merge


def test_a_comment_only_one_side_wrote_above_its_insertion_stays() -> None:
    ours = _below_the_section(ACCESS)
    theirs = _below_the_section("# Reading\n" + READER)
    result = merge3(SECTION, ours, theirs, "image.py")
    assert isinstance(result, Clean)
    assert result.text.count("# Reading") == 1
    assert result.text.count("# Implementation wrapper") == 1


FIXTURES = "import pytest\n\n\n@pytest.fixture\ndef tmp():\n    return 1\n"


def _with_fixture(name: str, body: str = "return True") -> str:
    return FIXTURES + (
        f'\n\n@pytest.fixture(name="slots", params=(True, False))\ndef {name}(request):\n'
        f"    {body}\n"
    )


def test_one_definition_added_by_both_sides_under_two_names_is_a_conflict() -> None:
    ours, theirs = _with_fixture("slots"), _with_fixture("_slots")
    both = ours + theirs.removeprefix(FIXTURES)  # what the members' merge makes of them
    trees = [ast.parse(text) for text in (FIXTURES, ours, theirs, both)]
    assert added_under_two_names(trees) == (
        "both sides added one definition under two names: slots and _slots"
    )
    assert structural_merge(FIXTURES, ours, theirs, PYTHON) is None  # the check turns it down
    result = merge3(FIXTURES, ours, theirs, "conftest.py")
    assert not isinstance(result, Clean)
    assert result.stage == "line"


def test_two_different_definitions_added_under_two_names_merge_cleanly() -> None:
    ours, theirs = _with_fixture("slots"), _with_fixture("frozen", "return False")
    result = merge3(FIXTURES, ours, theirs, "conftest.py")
    assert isinstance(result, Clean)
    assert "def slots(" in result.text and "def frozen(" in result.text


def test_added_under_two_names_looks_only_at_additions_in_one_scope() -> None:
    twice = _with_fixture("slots") + "\n\n" + _with_fixture("_slots").removeprefix(FIXTURES)
    trees = [ast.parse(text) for text in (FIXTURES, _with_fixture("slots"), FIXTURES, twice)]
    assert added_under_two_names(trees) is None  # one side added both: its own choice
    nested = "class T:\n    def slots(self):\n        return 1\n"
    other = "class U:\n    def _slots(self):\n        return 1\n"
    trees = [ast.parse(text) for text in ("", nested, other, nested + "\n\n" + other)]
    assert added_under_two_names(trees) is None  # two classes: two scopes


def test_a_comment_the_result_holds_more_often_than_both_sides_is_reported() -> None:
    base = "DEPS = [\n    'a',\n    'b',\n]\n"
    ours = "DEPS = [\n    'a',\n    'b',\n    # TODO: pin\n    'c',\n]\n"
    theirs = "DEPS = [\n    'a2',\n    'b',\n]\n"
    items = "".join(f"    # TODO: pin\n    '{item}',\n" for item in ("a2", "b", "c"))
    copied = "DEPS = [\n" + items + "]\n"
    reason = comments_not_kept([base, ours, theirs, copied])
    assert reason is not None and "# TODO: pin" in reason and "3 times" in reason
    right = "DEPS = [\n    'a2',\n    'b',\n    # TODO: pin\n    'c',\n]\n"
    assert comments_not_kept([base, ours, theirs, right]) is None
    # Both sides wrote the same comment anew: twice is what they hold together.
    twice = ours.replace("'a',", "# TODO: pin\n    'a',")
    assert comments_not_kept([base, ours, twice.replace("'c',\n", ""), twice]) is None


ALL = '__all__ = [\n    "Dataset",\n    "Variable",\n    # Exceptions\n    "MergeError",\n]\n'


def test_a_comment_above_both_sides_new_items_of_a_name_list_is_kept_once() -> None:
    # xarray df828b8a2f54: each side added an exception below the comment in __all__.
    ours = ALL.replace("    # Exceptions\n", '    # Exceptions\n    "CoordinateError",\n')
    theirs = ALL.replace("    # Exceptions\n", '    # Exceptions\n    "AlignmentError",\n')
    head = "from m import x\n\n\n"  # names imported on both sides: git's conflict
    result = merge3(
        head + ALL,
        head.replace("x", "x, y") + ours,
        head.replace("x", "x, z") + theirs,
        "errors.py",
    )
    assert isinstance(result, Clean) and result.stage == "structural"
    assert result.text.count("# Exceptions") == 1
    assert result.text.endswith(
        '    # Exceptions\n    "CoordinateError",\n    "AlignmentError",\n    "MergeError",\n]\n'
    )


def test_a_comment_line_every_side_keeps_that_the_result_lacks_is_reported() -> None:
    # pyqtgraph 087f271633c0: commented-out lines at the end of a file dropped by the merge.
    base = "def f():\n    x = 1\n    #if debug:\n    #    print(x)\n    return x\n"
    ours = base.replace("x = 1", "x = 2")
    theirs = base + "\n\ndef g():\n    return 0\n"
    lost = "def f():\n    x = 2\n    return x\n\n\ndef g():\n    return 0\n"
    reason = comments_not_kept([base, ours, theirs, lost])
    assert reason == "the merge loses the comment line '#if debug:' every side keeps"
    kept = ours + theirs.removeprefix(base)
    assert comments_not_kept([base, ours, theirs, kept]) is None
    # Re-indented (pyqtgraph 3d8d5044dfcc) is not kept either.
    shifted = kept.replace("    #if debug:", "        #if debug:")
    assert comments_not_kept([base, ours, theirs, shifted]) is not None
    # One side deleted the lines: theirs' choice, nothing lost.
    dropped = ours.replace("    #if debug:\n    #    print(x)\n", "")
    assert comments_not_kept([base, dropped, theirs, lost]) is None


def test_a_comment_both_sides_added_kept_twice_is_reported() -> None:
    # luigi d44492479a34: one block added by both sides, its attribute named two ways.
    base = "class Job:\n    name = 'spark'\n"

    def versions(comment: str) -> list[str]:
        ours = base + comment + "    track_url_in_stderr = True\n"
        theirs = base + comment + "    stream_for_tracking_url = 'stderr'\n"
        return [base, ours, theirs, ours + comment + "    stream_for_tracking_url = 'stderr'\n"]

    reason = comments_not_kept(versions("    # Spark applications write their logs into stderr\n"))
    assert reason is not None and "keeps it twice" in reason
    assert comments_not_kept(versions("    # fmt: off\n")) is None  # a pragma may repeat
