"""What the twenty-first unseen set (qtile, babel, graphene, PyGithub, Qiskit, plotly.py; 6 Dec
2026) showed that the driver now handles, from excerpts shaped like the real inputs: an import
added the implicit relative way (Python 2) among imports the other side made explicit, and
imports missing from an ``__all__`` the other side wrote to list every import."""

from __future__ import annotations

import ast

from fleet.merge._exports import export_missed
from fleet.merge._line import line_merge
from fleet.merge._merge3 import after_line_stage
from fleet.merge._module_prefix import implicit_relative_retired
from fleet.merge._result import Clean, Conflicted

# PyGithub f9c4303c53b3, github/tests/AllTests.py: ours added ``absolute_import`` and made every
# ``from Tag import *`` ``from .Tag import *``; theirs added ``from Traffic import *``.
MODULES = ["AuthenticatedUser", "Branch", "Commit", "Gist", "Issue", "Tag", "Team", "UserKey"]
ALL_TESTS = "# -*- coding: utf-8 -*-\n\n" + "".join(f"from {m} import *\n" for m in MODULES)
ALL_TESTS_OURS = ALL_TESTS.replace(
    "# -*- coding: utf-8 -*-\n\n",
    "# -*- coding: utf-8 -*-\n\nfrom __future__ import absolute_import\n\n",
).replace("from ", "from .").replace("from .__future__", "from __future__") + (
    "from .Issue945 import *\n")
ALL_TESTS_THEIRS = ALL_TESTS.replace("from Team import *\n",
                                     "from Team import *\nfrom Traffic import *\n")


def _trees(*texts: str) -> list[ast.Module]:
    return [ast.parse(text) for text in texts]


def test_an_implicit_relative_import_beside_ones_made_explicit_is_found() -> None:
    wrong = ALL_TESTS_OURS + "from Traffic import *\n"
    assert implicit_relative_retired(_trees(ALL_TESTS, ALL_TESTS_OURS, ALL_TESTS_THEIRS, wrong)
                                     ) == ("Traffic is imported as a top-level module beside "
                                           "imports the other side made relative (from "
                                           ".AuthenticatedUser ...)")
    humans = ALL_TESTS_OURS.replace("from .Team import *\n",
                                    "from .Team import *\nfrom .Traffic import *\n")
    assert implicit_relative_retired(
        _trees(ALL_TESTS, ALL_TESTS_OURS, ALL_TESTS_THEIRS, humans)) is None
    # A third-party import the other side adds away from the converted block is no sign.
    apart = "import os\nfrom requests import get\n\nVERSION = 1\n\n" + ALL_TESTS
    assert implicit_relative_retired(_trees(
        ALL_TESTS, ALL_TESTS_OURS, apart, "from requests import get\n" + ALL_TESTS_OURS)
    ) is None


def test_an_implicit_relative_import_added_among_explicit_ones_is_a_conflict() -> None:
    line = line_merge(ALL_TESTS, ALL_TESTS_OURS, ALL_TESTS_THEIRS)
    assert isinstance(line, Conflicted)
    result = after_line_stage(ALL_TESTS, ALL_TESTS_OURS, ALL_TESTS_THEIRS,
                              "github/tests/AllTests.py", line)
    if isinstance(result, Clean):
        assert "from Traffic import" not in result.text
    else:
        assert isinstance(result, Conflicted)


# Qiskit 23e5f118a8ee, qiskit/synthesis/multi_controlled/__init__.py: theirs added an __all__
# naming every public name the package imports (and dropped a private import); ours added
# ``from .gray_code import generate_gray_code, gray_code_chain`` and moved an import down.
PACKAGE = '''# This code is part of Qiskit.

"""Module containing multi-controlled circuits synthesis"""

from .mcmt_vchain import synth_mcmt_vchain
from .mcmt_xgate import synth_mcmt_xgate
from .mcx_synthesis import (
    synth_mcx_gray_code,
    synth_mcx_noaux_v24,
    synth_c3x,
)
from .multi_control_rotation_gates import _apply_cu, _apply_mcu_graycode
'''
PACKAGE_OURS = PACKAGE.replace(
    "from .mcmt_vchain import synth_mcmt_vchain\nfrom .mcmt_xgate import synth_mcmt_xgate\n",
    "from .gray_code import generate_gray_code, gray_code_chain\n"
    "from .mcmt_vchain import synth_mcmt_vchain\n").replace(
    "    synth_c3x,\n)\n", "    synth_c3x,\n)\nfrom .mcmt_xgate import synth_mcmt_xgate\n")
PACKAGE_THEIRS = PACKAGE.replace(
    "from .multi_control_rotation_gates import _apply_cu, _apply_mcu_graycode\n", '''
__all__ = [
    "synth_c3x",
    "synth_mcmt_vchain",
    "synth_mcmt_xgate",
    "synth_mcx_gray_code",
    "synth_mcx_noaux_v24",
]
''')


def test_an_import_missing_from_the_all_the_other_side_wrote_is_found() -> None:
    wrong = PACKAGE_THEIRS.replace(
        "from .mcmt_vchain import synth_mcmt_vchain\n",
        "from .gray_code import generate_gray_code, gray_code_chain\n"
        "from .mcmt_vchain import synth_mcmt_vchain\n")
    texts = [PACKAGE, PACKAGE_OURS, PACKAGE_THEIRS, wrong]
    assert export_missed(texts, _trees(*texts)) == (
        "generate_gray_code is imported but not in the __all__ the other side wrote")
    humans = wrong.replace('    "synth_c3x",\n',
                           '    "generate_gray_code",\n    "gray_code_chain",\n    "synth_c3x",\n')
    texts[3] = humans
    assert export_missed(texts, _trees(*texts)) is None
    # An __all__ that lists only some of that side's imports says nothing of the others.
    partial = PACKAGE_THEIRS.replace('    "synth_mcmt_xgate",\n', "")
    texts = [PACKAGE, PACKAGE_OURS, partial, wrong.replace('    "synth_mcmt_xgate",\n', "")]
    assert export_missed(texts, _trees(*texts)) is None


def test_an_all_written_by_one_side_and_imports_added_by_the_other_is_a_conflict() -> None:
    line = line_merge(PACKAGE, PACKAGE_OURS, PACKAGE_THEIRS)
    result = after_line_stage(PACKAGE, PACKAGE_OURS, PACKAGE_THEIRS,
                              "qiskit/synthesis/multi_controlled/__init__.py", line)
    if isinstance(result, Clean):
        tree = ast.parse(result.text)
        exported = [n for n in tree.body if isinstance(n, ast.Assign)]
        assert not exported or "generate_gray_code" in ast.unparse(exported[0])
    else:
        assert isinstance(result, Conflicted)
