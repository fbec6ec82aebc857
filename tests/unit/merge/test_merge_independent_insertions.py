"""Both sides insert statements at one point of a function body: merged, ours first, when both
runs are plain assignments whose order does not matter (synapse ``976b20e1d8f2``: one
``self.msc... = experimental.get(...)`` line appended to ``read_config`` by each side;
``6bdbec1dfe2a``: a handler each in ``__init__``); anything else stays a conflict. And the
equivalence the real-history benchmark judges with: such runs in another order are the same
program inside a function, never in a class body (an Enum's members, a dataclass's fields)."""

from __future__ import annotations

import pytest

from fleet.merge._independent import independent_runs
from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted
from fleet.merge.equivalence import same_program

CONFIG = '''import logging


class ExperimentalConfig(Config):
    def read_config(self, config, **kwargs):
        experimental = config.get("experimental_features") or {}

        # MSC2659: Application service ping endpoint
        self.msc2659_enabled = experimental.get("msc2659_enabled", False)

    def other(self):
        return 1
'''
POINT = '        self.msc2659_enabled = experimental.get("msc2659_enabled", False)\n'


def _sides(ours_lines: str, theirs_lines: str) -> tuple[str, str]:
    # Both sides also add an import at one place: git's line merge conflicts there too.
    ours = CONFIG.replace(POINT, POINT + ours_lines).replace(
        "import logging\n", "import logging\nimport os\n")
    theirs = CONFIG.replace(POINT, POINT + theirs_lines).replace(
        "import logging\n", "import logging\nimport sys\n")
    return ours, theirs


def test_two_settings_appended_at_one_point_are_both_kept_ours_first() -> None:
    ours_add = ('\n        # MSC3981: Recurse relations\n'
                '        self.msc3981_recurse_relations = experimental.get(\n'
                '            "msc3981_recurse_relations", False\n        )\n')
    theirs_add = ('\n        # MSC3970: Scope transaction IDs to devices\n'
                  '        self.msc3970_enabled = experimental.get("msc3970_enabled", False)\n')
    ours, theirs = _sides(ours_add, theirs_add)
    result = merge3(CONFIG, ours, theirs, "synapse/config/experimental.py")
    assert isinstance(result, Clean), result
    text = result.text
    assert text.index("msc3981_recurse_relations =") < text.index("msc3970_enabled =")
    assert "# MSC3981: Recurse relations" in text and "# MSC3970: Scope" in text
    assert "import os\n" in text and "import sys\n" in text
    # The humans' order, theirs first, is the same program; dropping one is not.
    humans = CONFIG.replace(POINT, POINT + theirs_add + ours_add).replace(
        "import logging\n", "import logging\nimport os\nimport sys\n")
    assert same_program(text, humans)
    assert not same_program(text, humans.replace(theirs_add, ""))


@pytest.mark.parametrize(
    ("ours_add", "theirs_add", "why"),
    [
        ("        self.a = hs.get_a()\n", "        self.b = self.a.child()\n",
         "theirs reads what ours binds"),
        ("        self.a = hs.get_a()\n", "        self.a = hs.get_b()\n",
         "one attribute bound two ways"),
        ("        self.a = config.pop('a', None)\n", "        self.b = config.pop('b', None)\n",
         "a call that changes what the other reads (nikola 79e2878de421)"),
        ("        self.a = next(it)\n", "        self.b = 2\n", "a call that draws from an iterator"),
        ("        register(a)\n", "        register(b)\n", "calls, not assignments"),
        ("        self.a = 1\n", "        if flag:\n            self.b = 2\n", "a compound statement"),
        ("        self.a += 1\n", "        self.b = 2\n", "an augmented assignment"),
        ("        items[0] = 1\n", "        self.b = 2\n", "a store into a subscript"),
        ("        self.a = 1\n", "        self.b = self.c = self\n", "reads self, which holds a"),
    ],
)
def test_insertions_at_one_point_that_may_not_swap_stay_a_conflict(
    ours_add: str, theirs_add: str, why: str
) -> None:
    ours, theirs = _sides(ours_add, theirs_add)
    result = merge3(CONFIG, ours, theirs, "synapse/config/experimental.py")
    assert isinstance(result, Conflicted), why


def test_the_rule_itself_needs_two_runs_of_plain_assignments() -> None:
    assert independent_runs(["x = f(1)"], ["y: int = g(2)", "z = h.i"])
    assert not independent_runs([], ["y = 1"])
    assert not independent_runs(["x = 1"], ["x = 2"])
    assert not independent_runs(["x = 1"], ["y = x"])
    assert not independent_runs(["x = await f()"], ["y = 1"])
    assert not independent_runs(["x = (y := 2)"], ["z = 1"])
    assert not independent_runs(["x = 1\ny = 2"], ["z = 1"])  # one statement per text
    assert not independent_runs(["x = ("], ["z = 1"])  # unparsable: unsure


def test_the_equivalence_swaps_assignments_in_functions_only() -> None:
    function = "def f(hs):\n    self.a = hs.get_a()\n    self.b = hs.get_b()\n    return 1\n"
    swapped = "def f(hs):\n    self.b = hs.get_b()\n    self.a = hs.get_a()\n    return 1\n"
    assert same_program(function, swapped)
    nested = function.replace("    self.", "    if x:\n        self.", 1)
    assert not same_program(nested, swapped)  # one of the two moved into a block
    enum = "class Color(Enum):\n    RED = 1\n    BLUE = 2\n"
    assert not same_program(enum, "class Color(Enum):\n    BLUE = 2\n    RED = 1\n")
    module = "RED = 1\nBLUE = 2\n"
    assert not same_program(module, "BLUE = 2\nRED = 1\n")
    dependent = "def f():\n    a = 1\n    b = a\n"
    assert not same_program(dependent, "def f():\n    b = a\n    a = 1\n")
    drawn = "def f(it):\n    a = next(it)\n    b = next(it)\n"
    assert not same_program(drawn, "def f(it):\n    b = next(it)\n    a = next(it)\n")
    # Three in a run, one pair dependent: every order keeping that pair is the same program.
    three = "def f():\n    a = 1\n    b = g()\n    c = a\n"
    assert same_program(three, "def f():\n    b = g()\n    a = 1\n    c = a\n")
    assert same_program(three, "def f():\n    a = 1\n    c = a\n    b = g()\n")
    assert not same_program(three, "def f():\n    c = a\n    a = 1\n    b = g()\n")
