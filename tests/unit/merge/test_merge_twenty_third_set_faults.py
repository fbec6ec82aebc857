"""What the twenty-third unseen set (jupyter_server, ipykernel, tqdm, pyopenssl, bottle,
jupyter_client; 6 Dec 2026) showed that the driver now handles, from an excerpt shaped like the
real input: both sides adding to a different operand of one comparison, each its own way of
making the two agree."""

from __future__ import annotations

import pytest

from fleet.merge._line import line_merge
from fleet.merge._merge3 import after_line_stage
from fleet.merge._result import Clean, Conflicted
from fleet.merge._tokens import merge_tokens

# jupyter_server 0e8bd97c7acb, tests/test_utils.py: the same Windows fix made at both ends.
FILEFIND = '''import os
from pathlib import Path


def test_filefind(tmp_path, filename, result):
    a = tmp_path / "a"
    a.mkdir()
    if isinstance(result, str):
        found = filefind(filename, [str(a)])
        found_relative = Path(found).relative_to(tmp_path)
        assert str(found_relative) == result
    else:
        with pytest.raises(result):
            filefind(filename, [str(a)])
'''
FILEFIND_OURS = FILEFIND.replace("== result\n", '== result.replace("/", os.sep)\n')
FILEFIND_THEIRS = FILEFIND.replace("str(found_relative) ==",
                                   'str(found_relative).replace(os.sep, "/") ==')


def test_both_sides_reconciling_the_two_operands_of_a_comparison_is_a_conflict() -> None:
    git = line_merge(FILEFIND, FILEFIND_OURS, FILEFIND_THEIRS)
    assert isinstance(git, Conflicted)
    merged = after_line_stage(FILEFIND, FILEFIND_OURS, FILEFIND_THEIRS, "test_utils.py", git)
    # before: ``str(found_relative).replace(os.sep, "/") == result.replace("/", os.sep)``
    assert isinstance(merged, Conflicted), merged.text


@pytest.mark.parametrize(("base", "ours", "theirs"), [
    ("assert str(x) == y\n", "assert str(x) == y.lower()\n", "assert str(x).upper() == y\n"),
    ("ok = a < b\n", "ok = int(a) < b\n", "ok = a < b[0]\n"),  # a call around, a subscript
    ("if a in b: pass\n", "if a in b.keys(): pass\n", "if a.name in b: pass\n"),
    ("ok = a < b < c\n", "ok = a < b.x < c\n", "ok = a < b < c.y\n"),  # a chain's operands
])
def test_additions_to_two_operands_of_one_comparison_are_not_combined(
        base: str, ours: str, theirs: str) -> None:
    assert merge_tokens(base, ours, theirs) is None


@pytest.mark.parametrize(("base", "ours", "theirs", "merged"), [
    # a new expected value on one side: a replacement, not a second way of reconciling
    ('assert v.version == parse("1.2")\n', 'assert v.version.strip() == parse("1.2")\n',
     'assert v.version == parse("1.3")\n', 'assert v.version.strip() == parse("1.3")\n'),
    # both additions in one operand's call, apart: one operand changed, not two
    ("ok = f(a, b) == c\n", "ok = f(a.x, b) == c\n", "ok = f(a, b.y) == c\n",
     "ok = f(a.x, b.y) == c\n"),
    # one addition in an operand, the other outside the comparison
    ("r = g(a == b, c)\n", "r = g(a == b, c.d)\n", "r = g(a == b.e, c)\n",
     "r = g(a == b.e, c.d)\n"),
])
def test_edits_that_do_not_reconcile_two_operands_still_merge(
        base: str, ours: str, theirs: str, merged: str) -> None:
    assert merge_tokens(base, ours, theirs) == merged


def test_one_side_alone_reconciling_the_operands_is_its_edit() -> None:
    got = after_line_stage(FILEFIND, FILEFIND_OURS, FILEFIND, "test_utils.py",
                           line_merge(FILEFIND, FILEFIND_OURS, FILEFIND))
    assert isinstance(got, Clean) and got.text == FILEFIND_OURS
