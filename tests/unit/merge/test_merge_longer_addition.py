"""Both sides added the same new code, one version a few lines longer: which one is the later is
unknown (a backport, the extra lines added since on one branch or dropped since on the other),
so the file conflicts. The holding rule took the longer version in four fresh-set merges where
the humans kept the shorter (pydantic ``4583b6de819b`` ``tests/test_json_schema.py``: the
``'required'`` keys; scrapy ``0b74ea0ee536``: an ``assert``; ``26c1642b90b0``: a lazy ``{}``
default in a property; ``5c69a73d0e02``: two mocks). Reduced to the lines that matter (scrapy,
BSD-3-Clause)."""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._diff3 import compose_disjoint

CLASS_BASE = (
    "class JsonRequest(Request):\n"
    "    def __init__(self, dumps_kwargs=None):\n"
    "        self._dumps_kwargs = dumps_kwargs\n\n"
    "    def replace(self, *args, **kwargs):\n"
    "        return super().replace(*args, **kwargs)\n"
)
SHORT = "\n    @property\n    def dumps_kwargs(self):\n        return self._dumps_kwargs\n"
LONG = (
    "\n    @property\n    def dumps_kwargs(self):\n"
    "        if self._dumps_kwargs is None:\n"
    "            self._dumps_kwargs = {}\n"
    "        return self._dumps_kwargs\n"
)
ANCHOR = "        self._dumps_kwargs = dumps_kwargs\n"


def test_a_method_both_sides_added_one_longer_conflicts() -> None:
    """scrapy ``26c1642b90b0`` (``scrapy/http/request/json_request.py``)."""
    short = CLASS_BASE.replace(ANCHOR, ANCHOR + SHORT)
    long = CLASS_BASE.replace(ANCHOR, ANCHOR + LONG)
    for ours, theirs in ((short, long), (long, short)):
        result = merge3(CLASS_BASE, ours, theirs, "json_request.py")
        assert not isinstance(result, Clean), result.text


TEST_BASE = "class TestRobots:\n    def test_allowed(self):\n        assert allowed('/a')\n"
TEST_SHORT = (
    "\n    def test_signal(self):\n"
    "        calls = signals_sent()\n"
    "        assert len(calls) == 1\n"
    "        assert calls[0]['robotparser'] is not None\n"
)
TEST_LONG = TEST_SHORT + "        assert 'crawler' not in calls[0]\n"


def test_a_test_both_sides_added_one_with_one_more_assert_conflicts() -> None:
    """scrapy ``0b74ea0ee536`` (``tests/test_downloadermiddleware_robotstxt.py``): each side
    also edits elsewhere, so git conflicts on the added test."""
    ours = "import mock\n" + TEST_BASE + TEST_SHORT
    theirs = TEST_BASE.replace("('/a')", "('/a/')") + TEST_LONG
    base = TEST_BASE
    for left, right in ((ours, theirs), (theirs, ours)):
        result = merge3(base, left, right, "test_robotstxt.py")
        assert not isinstance(result, Clean), result.text


def test_the_same_code_added_alike_with_an_edit_elsewhere_still_merges() -> None:
    """Both added one method alike; one side also fixed an unrelated line: no guess."""
    both = CLASS_BASE.replace(ANCHOR, ANCHOR + SHORT)
    theirs = both.replace("return super().replace", "return Request.replace")
    result = merge3(CLASS_BASE, both, theirs, "json_request.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert result.text == theirs


def test_holding_refuses_a_longer_version_of_an_insertion_both_made() -> None:
    assert compose_disjoint([], ["x"], ["x", "y"]) is None
    assert compose_disjoint([], ["x", "y"], ["x"]) is None
    assert compose_disjoint(["a", "b"], ["a", "X", "b"], ["a", "X", "Y", "b"]) is None
    assert compose_disjoint(["a", "b"], ["a", "Y", "X", "b"], ["a", "X", "b"]) is None
    # The shared insertion alike, the extra one elsewhere: the holding stands.
    assert compose_disjoint(["a", "b", "c"], ["a", "X", "b", "c"], ["a", "X", "b", "c", "Z"]) == [
        ("theirs", index) for index in range(5)
    ]
    # A rewrite both made, one also inserting below it (werkzeug b69901bf72a8): no addition of
    # new code both made, the holding stands.
    assert compose_disjoint(["a"], ["A"], ["A", "y"]) == [("theirs", 0), ("theirs", 1)]


def test_extra_blank_or_comment_lines_beside_a_shared_addition_are_held() -> None:
    """Both added one statement; one also a comment above it (pytest ``93b74d28d2ac``) or blank
    lines around it: the same program either way, so that side's lines stand."""
    shared = ["    _manager = None\n"]
    comment = ["    # Set by the session.\n", *shared]
    assert compose_disjoint([], shared, comment) == [("theirs", 0), ("theirs", 1)]
    assert compose_disjoint([], shared, ["\n", *shared, "\n"]) == [
        ("theirs", index) for index in range(3)
    ]


def test_a_blank_line_both_added_is_no_shared_code() -> None:
    """click ``73cfe126d82f``: both sides added a blank line at the top, one also the imports
    below it; the shared part changes no program, so the imports are one side's insertion."""
    code = ["from __future__ import annotations\n", "\n", "import collections.abc as cabc\n"]
    assert compose_disjoint([], ["\n"], ["\n", *code]) == [("theirs", index) for index in range(4)]
    # Shared code, though, with one more line of code beside it: a guess.
    assert compose_disjoint([], ["\n", "import a\n"], ["\n", "import a\n", "import b\n"]) is None
