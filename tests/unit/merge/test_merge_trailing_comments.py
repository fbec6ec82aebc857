"""Comment lines ending a file survive the structural merge when a set-aside class or function
stands before them.

libcst 1.9.0 keeps only the last of several comment or blank lines ending a file after a one-line
compound statement, and a set-aside class or function's placeholder is one (``class
__fleet_keep_1__: pass``). pyqtgraph ``087f271633c0`` (``GradientEditorItem.py``): nine lines of
commented-out code ending the file were lost from every version's tree, so from the merge (the
whole-result check made it a conflict). Such a text is now merged without its members set aside.
"""

from __future__ import annotations

import libcst as cst

from fleet.merge._merge3 import merge3
from fleet.merge._python import _tail_at_risk
from fleet.merge._result import Clean

TAIL = """class K:
    def m(self):
        return 2
        # x = 1
        #     y = 2
    # def old(self):
    #     pass
"""
BASE = "import os\n\n\ndef a():\n    return 1\n\n\n" + TAIL + "\n"
OURS = BASE.replace("\n\nclass K:", "\n\ndef b():\n    return os.sep\n\n\nclass K:")
THEIRS = BASE.replace("\n\nclass K:", "\n\ndef c():\n    return os.name\n\n\nclass K:")[:-1]


def test_libcst_drops_lines_ending_a_file_after_a_one_line_class() -> None:
    text = "class A: pass\n        # a\n    # b\n"
    assert cst.parse_module(text).code == "class A: pass\n    # b\n"  # (what this is for)
    assert cst.parse_module("class A:\n    pass\n        # a\n    # b\n").code.count("#") == 2


def test_the_comments_ending_the_file_are_kept() -> None:
    result = merge3(BASE, OURS, THEIRS, "k.py")
    assert isinstance(result, Clean) and result.stage == "structural", result
    text = result.text
    assert "def b():" in text and "def c():" in text
    for line in TAIL.splitlines():
        assert text.count(line + "\n") == 1, line
    assert text.index("def b():") < text.index("def c():") < text.index("class K:")


def test_which_ends_are_at_risk() -> None:
    assert _tail_at_risk("x = 1\n        # a\n    # b\n")
    assert _tail_at_risk("x = 1\n    # a\n\n")
    assert not _tail_at_risk("x = 1\n    # a\n")  # one line: libcst keeps it
    assert not _tail_at_risk("x = 1\n# a\n# b\n")  # none indented
    assert not _tail_at_risk("x = 1\n        # a\ny = 2\n")  # not at the end
