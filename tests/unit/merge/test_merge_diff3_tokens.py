"""The token diff3 used by the structural stage."""

from __future__ import annotations

import itertools

from fleet.merge._diff3 import compose_disjoint, diff3


def _kinds(base: str, ours: str, theirs: str) -> list[str]:
    return [chunk.kind for chunk in diff3(list(base), list(ours), list(theirs))]


def test_diff3_classifies_chunks() -> None:
    assert _kinds("abc", "abc", "abc") == ["stable", "stable", "stable"]
    assert _kinds("abc", "aXc", "abc") == ["stable", "ours", "stable"]
    assert _kinds("abc", "abc", "abYc") == ["stable", "stable", "theirs", "stable"]
    assert _kinds("abc", "aXc", "aXc") == ["stable", "both", "stable"]
    assert _kinds("abc", "aXc", "aYc") == ["stable", "conflict", "stable"]


def test_diff3_chunks_cover_every_token_in_order() -> None:
    base, ours, theirs = list("abcdef"), list("aXcdeZf"), list("abYdf")
    chunks = diff3(base, ours, theirs)
    for attr, seq in (("base", base), ("ours", ours), ("theirs", theirs)):
        spans = [getattr(chunk, attr) for chunk in chunks]
        assert spans[0][0] == 0 and spans[-1][1] == len(seq)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


def test_compose_disjoint_takes_adjacent_replacements() -> None:
    merged = compose_disjoint(list("bc"), list("Xc"), list("bY"))
    assert merged == [("ours", 0), ("theirs", 1)]


def test_compose_disjoint_refuses_overlap_and_touching_insertions() -> None:
    assert compose_disjoint(list("b"), list("X"), list("Y")) is None
    assert compose_disjoint(list(""), list("X"), list("Y")) is None  # both insert at one point
    assert compose_disjoint(list("bcd"), list("bcXd"), list("bY")) is None  # insertion inside edit


def test_compose_disjoint_puts_insertions_on_the_edge_of_the_other_change() -> None:
    merged = compose_disjoint(list("bc"), list("bXc"), list("Yc"))
    assert merged == [("theirs", 0), ("ours", 1), ("base", 1)]
    merged = compose_disjoint(list("bc"), list("Xbc"), list("Yc"))
    assert merged == [("ours", 0), ("theirs", 0), ("base", 1)]
