"""What the tests of the driver's faults found on real history share: a fault case must conflict
whichever side is ours, and the whole-result checks take the four versions as parsed trees."""

from __future__ import annotations

import ast

from fleet.merge import Clean, merge3

__all__ = ["conflicts_both_ways", "trees"]


def conflicts_both_ways(base: str, ours: str, theirs: str, name: str) -> None:
    """``merge3`` of ``ours`` and ``theirs`` (and of the two swapped) is not clean."""
    for one, other in ((ours, theirs), (theirs, ours)):
        result = merge3(base, one, other, name)
        assert not isinstance(result, Clean), result.text


def trees(*texts: str) -> list[ast.Module]:
    """The versions (base, ours, theirs, result) parsed, as the whole-result checks take them."""
    return [ast.parse(text) for text in texts]
