"""Setting aside unchanged segments before libcst parses: exact round trip, same merge."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.merge import Clean
from fleet.merge._context import render_markers as _render_markers
from fleet.merge._python import _merge_texts, structural_merge
from fleet.merge._reduce import expand, reduce_unchanged, segments
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
    assert [(m.kind, m.name) for m in klass.members][1:] == [
        ("assign", "x"),
        ("def", "m"),
        ("def", "n"),
    ]
    assert klass.members[3].text.startswith("\n    # comment before n\n")


def test_reduction_replaces_shared_members_and_expands_back() -> None:
    ours = TRICKY.replace("return 1\n", "return 10\n")
    theirs = TRICKY.replace("return 3", "return 30")
    reduction = reduce_unchanged(TRICKY, ours, theirs)
    assert reduction is not None
    reduced, originals = reduction
    assert "    def __fleet_keep_" in reduced[0]  # C.m, set aside inside the class
    assert "return 2" not in reduced[0]
    for text, original in zip(reduced, (TRICKY, ours, theirs), strict=True):
        assert expand(text, originals) == original


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
