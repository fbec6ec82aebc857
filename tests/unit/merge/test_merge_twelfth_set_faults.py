"""Wrong clean merges found by reading the twelfth unseen set's clean results that differ from
the humans' (cython, numba, readthedocs, statsmodels, wagtail; 5 Dec 2026). Each is a conflict
now; the neighbouring right merges stay clean."""

from __future__ import annotations

import ast

from fleet.merge import Clean, merge3
from fleet.merge._crossed import added_beside_moved

# numba 6f9fda42d7c8: theirs moved the kernel-property tests into a class the simulator skips;
# ours added one more below the last of them.
DISPATCHER = (
    "from numba.cuda.testing import CUDATestCase\n"
    "\n"
    "\n"
    "class TestDispatcher(CUDATestCase):\n"
    "    def test_lock(self):\n"
    "        self.assertTrue(lock())\n"
    "\n"
    "    def test_shared_mem(self):\n"
    "        self.assertEqual(kernel.shared_mem, 0)\n"
)
NEW_TEST = (
    "\n"
    "    def test_max_threads(self):\n"
    "        self.assertGreater(kernel.max_threads, 0)\n"
)
MOVED = (
    "from numba.cuda.testing import CUDATestCase\n"
    "\n"
    "\n"
    "class TestDispatcher(CUDATestCase):\n"
    "    def test_lock(self):\n"
    "        self.assertTrue(lock())\n"
    "\n"
    "\n"
    "@skip_on_simulator('no kernel properties')\n"
    "class TestKernelProperties(CUDATestCase):\n"
    "    def test_shared_mem(self):\n"
    "        self.assertEqual(kernel.shared_mem, 0)\n"
    "\n"
    "\n"
    "class TestSpecialization(CUDATestCase):\n"
    "    def test_specialize(self):\n"
    "        self.assertTrue(kernel.specialize())\n"
)


def test_a_member_added_below_one_the_other_side_moved_away_is_a_conflict() -> None:
    ours = DISPATCHER + NEW_TEST
    result = merge3(DISPATCHER, ours, MOVED, "test_dispatcher.py")
    assert not isinstance(result, Clean)
    kept_behind = MOVED.replace("\n\n\n@skip", NEW_TEST + "\n\n@skip")  # where it lands
    trees = [ast.parse(text) for text in (DISPATCHER, ours, MOVED, kept_behind)]
    assert added_beside_moved(trees) == (
        "TestDispatcher.test_max_threads was added below test_shared_mem, which the other side "
        "moved to TestKernelProperties"
    )


def test_a_member_added_below_one_that_stays_merges_cleanly() -> None:
    above = "    def test_shared_mem"
    ours = DISPATCHER.replace(above, NEW_TEST.lstrip("\n") + "\n" + above)
    theirs = DISPATCHER.replace("assertTrue(lock())", "assertTrue(lock(timeout=1))")
    result = merge3(DISPATCHER, ours, theirs, "test_dispatcher.py")
    assert isinstance(result, Clean)
    assert "test_max_threads" in result.text and "timeout=1" in result.text
    # Below a member nobody moved (test_lock): no finding, whatever the other side moved.
    trees = [ast.parse(text) for text in (DISPATCHER, ours, MOVED, ours)]
    assert added_beside_moved(trees) is None


# cython 54e01092b1ae: one class attribute renamed on one side (and read under its new name),
# its typo fixed on the other; both kept, the class body broke.
PATTERNS = (
    "class PatternNode:\n"
    "    child_attrs = ['pattern']\n"
    "\n"
    "\n"
    "class MappingPatternNode(PatternNode):\n"
    "    child_atts = PatternNode.child_attrs + ['keys', 'value_patterns']\n"
    "\n"
    "    def analyse(self):\n"
    "        return self.keys\n"
)


def test_an_assignment_renamed_two_ways_is_a_conflict() -> None:
    ours = PATTERNS.replace(
        "    child_atts = PatternNode.child_attrs",
        "    initial_child_attrs = PatternNode.initial_child_attrs",
    ).replace("    child_attrs = ['pattern']", "    initial_child_attrs = ['pattern']")
    theirs = PATTERNS.replace("child_atts =", "child_attrs =").replace(
        "return self.keys", "return self.keys or []"
    )
    result = merge3(PATTERNS, ours, theirs, "MatchCaseNodes.py")
    assert not isinstance(result, Clean)


def test_an_assignment_one_side_renamed_and_the_other_left_merges_cleanly() -> None:
    theirs = PATTERNS.replace("return self.keys", "return self.keys or []")
    ours = PATTERNS.replace("    child_atts =", "    child_attrs =")
    result = merge3(PATTERNS, ours, theirs, "MatchCaseNodes.py")
    assert isinstance(result, Clean)
    assert "child_attrs = PatternNode" in result.text and "child_atts" not in result.text


# numba 021503f68949: both sides added imports and kernels below the imports; theirs' new
# import came out below ours' kernels, out of the import block.
OPERATORS = "import numpy as np\nimport operator\n\n\nclass TestOperators:\n    pass\n"
ADD = "\n\ndef add(a, b):\n    return a + b\n"
GT = "\n\ndef gt(a, b):\n    return a > b\n"


def test_both_sides_new_imports_stay_above_both_sides_new_functions() -> None:
    ours = OPERATORS.replace("import operator\n", "import operator\nimport itertools\n" + ADD)
    theirs = OPERATORS.replace("import operator\n", "import operator\nimport math\n" + GT)
    result = merge3(OPERATORS, ours, theirs, "test_operator.py")
    assert isinstance(result, Clean) and result.stage == "structural"
    assert result.text.startswith(
        "import numpy as np\nimport operator\nimport itertools\nimport math\n\n\ndef add("
    )
    assert result.text.index("def add(") < result.text.index("def gt(")


def test_one_sides_import_below_its_own_function_keeps_its_place() -> None:
    ours = OPERATORS.replace("import operator\n", "import operator\n" + ADD + "\n\nimport math\n")
    theirs = OPERATORS.replace("    pass\n", "    value = 1\n")
    result = merge3(OPERATORS, ours, theirs, "test_operator.py")
    assert isinstance(result, Clean)
    assert result.text.index("def add(") < result.text.index("import math")


# cython 614d740c335e: one helper added by both sides under two names, its docstring the same
# but for a blank line, its body a few lines apart.
UTILS = "from parser import parse\n\n\ndef run(code):\n    return parse(code)\n"
HELPER = (
    "\n\ndef {name}(code):\n"
    '    """Compiles code far enough to get errors from the parser stage.\n'
    "{gap}"
    "    Is useful for checking for syntax errors.\n"
    '    """\n'
    "    context = Context('test')\n"
    "{extra}"
    "    return parse(code, context)\n"
)


def test_one_helper_both_sides_added_under_two_names_is_a_conflict() -> None:
    ours = UTILS.replace("import parse", "import parse, Context") + HELPER.format(
        name="parse_python_code", gap="", extra="    context.strict = True\n"
    )
    theirs = UTILS.replace("import parse", "import parse, Context, dump") + HELPER.format(
        name="py_parse_code", gap="\n", extra=""
    )
    result = merge3(UTILS, ours, theirs, "TestUtils.py")
    assert not isinstance(result, Clean)


def test_two_helpers_that_say_different_things_merge_cleanly() -> None:
    ours = UTILS.replace("import parse", "import parse, Context") + HELPER.format(
        name="parse_python_code", gap="", extra=""
    )
    other = HELPER.replace("syntax errors", "type errors in annotations")
    theirs = UTILS.replace("import parse", "import parse, Context, dump") + other.format(
        name="check_types", gap="", extra=""
    )
    result = merge3(UTILS, ours, theirs, "TestUtils.py")
    assert isinstance(result, Clean)
    assert "def parse_python_code(" in result.text and "def check_types(" in result.text


# The thirteenth set (5 Dec): holoviews 8e5e7747e89d. Ours replaced a dict's last entry; theirs
# gave it a trailing comma and added the same new entry below: theirs' lines seemed to hold
# ours', and the entry ours had removed (as broken) came back.
IBIS = (
    "import numpy\n"
    "\n"
    "\n"
    "def aggregate(columns):\n"
    "    function = {\n"
    "        numpy.min: ops.Min,\n"
    "        numpy.cumsum: ops.CumulativeSum\n"
    "    }\n"
    "    return function[columns]\n"
)


def test_an_entry_one_side_replaced_and_the_other_only_gave_a_comma_is_a_conflict() -> None:
    ours = IBIS.replace("        numpy.cumsum: ops.CumulativeSum\n", "        len: ops.Count,\n")
    theirs = IBIS.replace(
        "        numpy.cumsum: ops.CumulativeSum\n",
        "        numpy.cumsum: ops.CumulativeSum,\n        len: ops.Count,\n",
    )
    result = merge3(IBIS, ours, theirs, "ibis.py")
    assert not isinstance(result, Clean)


def test_an_entry_given_a_comma_beside_the_other_sides_edit_merges_cleanly() -> None:
    ours = IBIS.replace("ops.CumulativeSum\n", "ops.CumulativeSum,\n        len: ops.Count,\n")
    theirs = IBIS.replace("numpy.min: ops.Min,", "numpy.amin: ops.Min,")
    result = merge3(IBIS, ours, theirs, "ibis.py")
    assert isinstance(result, Clean)
    assert "numpy.amin: ops.Min," in result.text and "len: ops.Count," in result.text
