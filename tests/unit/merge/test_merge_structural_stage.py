"""Stage 2, the structural merge, and the profile that drives it."""

from __future__ import annotations

import ast

import libcst as cst

from fleet.merge import Clean, Conflicted, merge3
from fleet.merge._pykeys import code, formatting_only, identity, keyed
from fleet.merge._python import structural_merge
from fleet.merge._sets import merge_name_set
from fleet.merge.profile import PYTHON, profile_for

BASE = "import os\n\n\ndef f():\n    return 1\ndef g():\n    return 2\n"


def _stmt(text: str) -> cst.BaseStatement:
    return cst.parse_module(text).body[0]


def test_profile_for_paths() -> None:
    assert profile_for("pkg/mod.py") is PYTHON
    assert profile_for("stubs/mod.PYI") is PYTHON
    assert profile_for("README.md") is None


def test_identity_is_kind_and_name() -> None:
    assert identity(PYTHON, _stmt("def f(a):\n    pass\n")) == ("def", "f")
    assert identity(PYTHON, _stmt("class C(B):\n    pass\n")) == ("class", "C")
    assert identity(PYTHON, _stmt("from ..a.b import c\n")) == ("from", "..a.b")
    assert identity(PYTHON, _stmt("import a.b as c\n")) == ("import", "a.b as c")
    assert identity(PYTHON, _stmt("X: int = 1\n")) == ("assign", "X")
    assert identity(PYTHON, _stmt('"""doc"""\n'), first=True) == ("docstring",)
    assert identity(PYTHON, _stmt("x.y = 1\n")) is None
    assert identity(PYTHON, _stmt("print(1)\n")) is None


def test_duplicated_symbols_become_anonymous() -> None:
    body = cst.parse_module("def f():\n    pass\ndef f():\n    return 1\ndef g():\n    pass\n").body
    (items,) = keyed(PYTHON, [body])
    assert [key[0] for key, _ in items] == ["anon", "anon", "def"]


def test_formatting_only_sees_quotes_commas_wrapping_but_not_comments() -> None:
    before = _stmt("x = f('a', 1)\n")
    assert formatting_only(before, _stmt('x = f(\n    "a",\n    1,\n)\n'))
    assert not formatting_only(before, _stmt("x = f('a', 2)\n"))
    assert not formatting_only(before, _stmt("x = f('a', 1)  # why\n"))


def test_import_names_merge_as_sets() -> None:
    base = _stmt("from m import (\n    a,\n    b,\n)\n")
    ours = _stmt("from m import (\n    a,\n    b,\n    c,\n)\n")
    theirs = _stmt("from m import (\n    b,\n    d,\n)\n")
    merged = merge_name_set(base, ours, theirs)
    assert merged is not None
    assert cst.Module(body=[merged]).code == "from m import (\n    b,\n    c,\n    d,\n)\n"
    star = _stmt("from m import *\n")
    assert merge_name_set(star, star, star) is None


def test_sorted_names_stay_sorted_and_all_merges_as_a_set() -> None:
    base = _stmt("from m import b, d\n")
    merged = merge_name_set(
        base, _stmt("from m import a, b, d\n"), _stmt("from m import b, c, d\n")
    )
    assert merged is not None and code(merged) == "from m import a, b, c, d\n"
    base = _stmt('__all__ = ["Zeta", "Alpha"]\n')
    ours = _stmt('__all__ = ["Zeta", "Alpha", "Beta"]\n')
    theirs = _stmt('__all__ = ["Zeta", "Gamma"]\n')
    merged = merge_name_set(base, ours, theirs)
    assert merged is not None and code(merged) == '__all__ = ["Zeta", "Beta", "Gamma"]\n'


def test_name_sets_refuse_what_is_not_a_set() -> None:
    base = _stmt('X = ["a", f()]\n')
    assert merge_name_set(base, _stmt('X = ["a", f(), "b"]\n'), _stmt('X = ["c", f()]\n')) is None
    base = _stmt("from m import a\n")
    commented = _stmt("from m import a, c  # why\n")
    assert merge_name_set(base, _stmt("from m import a, b\n"), commented) is None


def test_parse_failure_returns_none_and_merge3_keeps_line_result() -> None:
    ours = BASE.replace("return 1", "return 1 +")
    theirs = BASE.replace("return 1", "return 2")
    assert structural_merge(BASE, ours, theirs, PYTHON) is None
    result = merge3(BASE, ours, theirs, "m.py")
    assert isinstance(result, Conflicted) and result.stage == "line"


def test_inputs_containing_the_sentinel_are_left_to_lines() -> None:
    base = BASE + "__fleet_merge_0_ours__ = 1\n"
    assert structural_merge(base, base + "a = 1\n", base + "b = 2\n", PYTHON) is None


def test_structural_clean_result_parses_and_keeps_untouched_bytes() -> None:
    base = (
        "# top  comment\nimport os\n\n\ndef f():  # keep\n    return  1\ndef g():\n    return 2\n"
    )
    ours = base.replace("    return  1\n", "    return  1 + 1\n")
    theirs = base.replace("def g():\n", "def g(x=0):\n")
    result = merge3(base, ours, theirs, "m.py")
    assert isinstance(result, Clean) and result.stage == "structural"
    ast.parse(result.text)
    assert result.text == base.replace("return  1\n", "return  1 + 1\n").replace("g():", "g(x=0):")


def test_structural_conflict_wins_when_narrower_than_the_line_conflict() -> None:
    base = "import os\n\n\ndef f():\n    return 1\n"
    ours = "import os\nimport re\n\n\ndef f():\n    return 10\n"
    theirs = "import os\nimport sys\n\n\ndef f():\n    return 20\n"
    result = merge3(base, ours, theirs, "m.py")
    assert isinstance(result, Conflicted) and result.stage == "structural"
    assert result.text_with_markers.startswith("import os\nimport re\nimport sys\n")
    (region,) = result.conflicts
    assert (region.ours, region.theirs) == ("    return 10\n", "    return 20\n")


def test_equal_width_conflicts_keep_git_markers() -> None:
    base = "def f():\n    a = 1\n    b = 2\n    return a + b\n"
    ours = "def f():\n    a = 10\n    b = 2\n    c = 3\n    return a + b\n"
    theirs = "def f():\n    a = 1\n    b = 20\n    c = 4\n    return a + b\n"
    structural = structural_merge(base, ours, theirs, PYTHON)
    result = merge3(base, ours, theirs, "m.py")
    assert isinstance(structural, Conflicted) and isinstance(result, Conflicted)
    assert result.stage == "line"
    assert result.conflicted_lines == structural.conflicted_lines == 12


def test_structural_conflicts_are_marked_around_the_symbol_only() -> None:
    base = "def f():\n    return 1\ndef g():\n    return 2\n"
    ours = "def f():\n    return 10\ndef g():\n    return 3\n"
    theirs = "def f():\n    return 1\n\n\ndef h():\n    pass\ndef g():\n    return 4\n"
    result = structural_merge(base, ours, theirs, PYTHON)
    assert isinstance(result, Conflicted)
    (region,) = result.conflicts
    assert (region.ours, region.base, region.theirs) == (
        "    return 3\n",
        "    return 2\n",
        "    return 4\n",
    )
    assert result.text_with_markers.startswith("def f():\n    return 10\n\n\ndef h():\n    pass\n")


def test_both_sides_reordering_differently_is_unsure() -> None:
    base = "def a():\n    pass\ndef b():\n    pass\ndef c():\n    pass\n"
    ours = "def c():\n    pass\ndef a():\n    pass\ndef b():\n    pass\n"
    theirs = "def b():\n    pass\ndef a():\n    pass\ndef c():\n    pass\n"
    assert structural_merge(base, ours, theirs, PYTHON) is None


def test_top_level_symbol_conflict_keeps_gits_narrow_markers() -> None:
    base = "import os\n\n\ndef f(a):\n    x = 1\n    y = 2\n    z = 3\n    return x + y + z\n"
    ours = base.replace("import os\n", "import os\nimport re\n").replace("f(a)", "f(a, b)")
    ours = ours.replace("z = 3", "z = 30")
    theirs = base.replace("import os\n", "import os\nimport sys\n").replace("f(a)", "f(a, c)")
    result = merge3(base, ours, theirs, "m.py")
    assert isinstance(result, Conflicted) and result.stage == "structural"
    assert result.text_with_markers == (
        "import os\nimport re\nimport sys\n\n\n"
        "<<<<<<< ours\ndef f(a, b):\n||||||| base\ndef f(a):\n=======\ndef f(a, c):\n"
        ">>>>>>> theirs\n    x = 1\n    y = 2\n    z = 30\n    return x + y + z\n"
    )
    (region,) = result.conflicts
    assert (region.ours, region.theirs) == ("def f(a, b):\n", "def f(a, c):\n")


def test_nested_symbol_conflict_keeps_gits_markers_reindented() -> None:
    base = (
        "import os\n\n\nclass C:\n    def m(self, a):\n        x = 1\n        y = 2\n"
        "        return x + y\n"
    )
    ours = base.replace("import os\n", "import os\nimport re\n").replace("(self, a)", "(self, b)")
    theirs = base.replace("import os\n", "import os\nimport sys\n").replace(
        "(self, a)", "(self, c)"
    )
    result = merge3(base, ours, theirs, "m.py")
    assert isinstance(result, Conflicted) and result.stage == "structural"
    assert result.text_with_markers == (
        "import os\nimport re\nimport sys\n\n\nclass C:\n"
        "<<<<<<< ours\n    def m(self, b):\n||||||| base\n    def m(self, a):\n=======\n"
        "    def m(self, c):\n>>>>>>> theirs\n        x = 1\n        y = 2\n        return x + y\n"
    )


def test_nested_symbol_with_a_multiline_string_conflicts_whole() -> None:
    base = 'class C:\n    def m(self, a):\n        """Doc.\n\n        More.\n        """\n'
    base += "        return 1\n"
    ours = base.replace("(self, a)", "(self, b)")
    theirs = base.replace("(self, a)", "(self, c)")
    result = structural_merge(base, ours, theirs, PYTHON)
    assert isinstance(result, Conflicted)
    (region,) = result.conflicts
    assert region.ours == ours.split("\n", 1)[1]  # the whole method, its docstring untouched
