"""What the twenty-first unseen set (qtile, babel, graphene, PyGithub, Qiskit, plotly.py; 6 Dec
2026) showed that the driver now handles, from an excerpt shaped like the real inputs: an import
added the implicit relative way (Python 2) among imports the other side made explicit."""

from __future__ import annotations

import ast

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
