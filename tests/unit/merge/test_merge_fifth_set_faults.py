"""The two wrong clean merges found in the fifth unseen set (dask, networkx, twisted, hypothesis,
mypy, bokeh), both now conflicts. Reduced to the lines that matter.

- bokeh ``2634352f4770`` (``setup.py``, BSD-3-Clause): one side rewrote two ``print`` lines
  (``bokeh-compiler.js`` made ``bokeh-api.js``), the other inserted the same two new lines
  above the old ones. Composing a one-for-one rewrite with an insertion at its edge kept the
  new lines twice.
- networkx ``d24c7432824a`` (``generators/geometric.py``, BSD-3-Clause): ``S1_graph`` renamed
  ``soft_random_S1_H2_geometric_graph`` on one side and ``S1_model`` on the other, each with
  edits of its own; both functions were kept, and both names exported.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._diff3 import compose_disjoint
from tests.unit.merge._faults import conflicts_both_ways

PRINT_BASE = (
    "def show_bundle_sizes():\n"
    "    try:\n"
    '        print("  - bokeh.js              : %6.1f KB" % size("js", "bokeh.js"))\n'
    "\n"
    '        print("  - bokeh-compiler.js     : %6.1f KB" % size("js", "bokeh-compiler.js"))\n'
    '        print("  - bokeh-compiler.min.js : %6.1f KB" % size("js", "bokeh-compiler.min.js"))\n'
    "    except Exception as e:\n"
    "        print(e)\n"
)
API = (
    '        print("  - bokeh-api.js          : %6.1f KB" % size("js", "bokeh-api.js"))\n'
    '        print("  - bokeh-api.min.js      : %6.1f KB" % size("js", "bokeh-api.min.js"))\n'
)
OLD = (
    '        print("  - bokeh-compiler.js     : %6.1f KB" % size("js", "bokeh-compiler.js"))\n'
    '        print("  - bokeh-compiler.min.js : %6.1f KB" % size("js", "bokeh-compiler.min.js"))\n'
)
PRINT_OURS = PRINT_BASE.replace(OLD, API)
PRINT_THEIRS = PRINT_BASE.replace(OLD, API + "\n" + OLD)


def test_lines_one_side_rewrote_and_the_other_inserted_beside_them_conflict() -> None:
    conflicts_both_ways(PRINT_BASE, PRINT_OURS, PRINT_THEIRS, "setup.py")


def test_composing_never_repeats_an_item_beyond_both_sides() -> None:
    assert compose_disjoint(["a"], ["b"], ["b", "a"]) is None
    assert compose_disjoint(["a"], ["b"], ["a", "b"]) is None
    # An insertion beside a rewrite that differs from it still composes.
    assert compose_disjoint(["a"], ["b"], ["c", "a"]) == [("theirs", 0), ("ours", 0)]


RENAME_BASE = (
    '__all__ = ["waxman_graph", "S1_graph"]\n\n\n'
    "def waxman_graph(n):\n"
    "    return n\n\n\n"
    "def S1_graph(beta, *, n=None, gamma=None, kappas=None, seed=None):\n"
    '    """Returns a S1 model."""\n'
    "    if beta < 0:\n"
    '        raise ValueError("The inverse temperature cannot be smaller than 0.")\n'
    "    kappas = [10] * n if kappas is None else kappas\n"
    "    return build(beta, kappas, seed)\n"
)
RENAME_OURS = (
    RENAME_BASE.replace("S1_graph", "soft_random_S1_H2_geometric_graph")
    .replace("inverse temperature", "parameter beta")
    .replace('"""Returns a S1 model."""', '"""Returns a S1/H2 model."""')
)
RENAME_THEIRS = RENAME_BASE.replace("S1_graph", "S1_model").replace(
    "[10] * n", "{i: 10 for i in range(n)}"
)


def test_one_function_renamed_two_ways_conflicts() -> None:
    result = merge3(RENAME_BASE, RENAME_OURS, RENAME_THEIRS, "geometric.py")
    assert not isinstance(result, Clean), result.text


def test_a_function_renamed_on_one_side_and_another_added_on_the_other_still_merges() -> None:
    theirs = RENAME_BASE + "\n\ndef other(x):\n    return x\n"
    result = merge3(RENAME_BASE, RENAME_OURS, theirs, "geometric.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert "def soft_random_S1_H2_geometric_graph(" in result.text
    assert "def other(x):" in result.text and "def S1_graph(" not in result.text
