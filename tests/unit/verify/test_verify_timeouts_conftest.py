"""Issue 17, defects 5 and 6: a hung test reads as a timeout (with the failures already seen,
the hung process tree killed), and a conftest.py that aborts pytest affects only the units whose
evidence needs its directory, by name."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fleet.graph import index
from fleet.types import Verdict
from fleet.verify import GateOptions, run_gates
from sandbox import Sandbox

from .conftest import LIB, MakePatch, git

pytestmark = pytest.mark.sandbox

DYNAMIC = GateOptions(fail_fast=False, skip=frozenset({"review"}))
HUNG = GateOptions(fail_fast=False, skip=frozenset({"review"}), timeout_s=20)
HANGS = '''import subprocess
import time

from lib import total


def test_sum():
    assert total([1, 2]) == 3


def test_waits_for_a_child():
    if total([]) == 0:
        return
    subprocess.Popen(["sleep", "987"])
    time.sleep(600)
'''


def _impacted(verdicts: list[Verdict]) -> Verdict:
    [got] = [v for v in verdicts if v.gate == "impacted_tests"]
    return got


def test_a_hung_test_is_a_timeout_with_the_failures_seen_and_its_tree_killed(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    (lib_repo / "tests" / "test_hangs.py").write_text(HANGS)
    git(lib_repo, "add", "-A")
    git(lib_repo, "commit", "-qm", "a test that waits")
    # total() + 1: test_sum fails, then test_waits_for_a_child hangs in a child's sleep
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(values) + 1")})
    got = _impacted(run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                              options=HUNG))
    assert got.status == "reject", got
    evidence = got.evidence
    assert "timed out after 20 s (the process tree was killed)" in evidence
    assert "failures seen before: tests/test_hangs.py::test_sum" in evidence
    assert "pytest gave no report" not in evidence
    alive = subprocess.run(["pgrep", "-f", "sleep 987"], capture_output=True, text=True)
    assert alive.stdout == "", "the hung test's child outlived the sandbox run"


BROKEN_CONFTEST = "import a_plugin_that_is_not_installed\n"
NAMES_ONLY = '''"""Docs examples: `total` is mentioned here, never called."""


def test_docs():
    assert "total" in __doc__
'''
USES_TOTAL = "from lib import total\n\n\ndef test_total_b():\n    assert total([2]) == 2\n"


@pytest.fixture
def conftest_repo(lib_repo: Path) -> Path:
    (lib_repo / "tests" / "docs").mkdir()
    (lib_repo / "tests" / "docs" / "conftest.py").write_text(BROKEN_CONFTEST)
    (lib_repo / "tests" / "docs" / "test_docs.py").write_text(NAMES_ONLY)
    (lib_repo / "other").mkdir()
    (lib_repo / "other" / "conftest.py").write_text(BROKEN_CONFTEST)
    (lib_repo / "other" / "test_other.py").write_text(USES_TOTAL)
    git(lib_repo, "add", "-A")
    git(lib_repo, "commit", "-qm", "two directories with a conftest that aborts pytest")
    return lib_repo


def test_a_broken_conftest_costs_only_the_units_whose_evidence_needs_it(
    conftest_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    graph = index(conftest_repo)
    deposit = make_patch({"lib.py": LIB.replace("+ amount", "+ int(amount)")})
    got = _impacted(run_gates(conftest_repo, deposit, ["lib.py::Account.deposit"],
                              sandbox=bwrap_sandbox, graph=graph, options=DYNAMIC))
    # tests/docs names Account nowhere: not even selected; the evidence is tests/test_lib.py
    assert got.status == "accept", got

    # total(): tests/docs is selected by name (it reaches nothing), other/ really calls it
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(list(values))")})
    got = _impacted(run_gates(conftest_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                              graph=graph, options=DYNAMIC))
    assert got.status == "unknown", got
    assert "other/conftest.py aborts pytest" in got.evidence
    assert "a_plugin_that_is_not_installed" in got.evidence
    assert "the evidence needs other/test_other.py below it" in got.evidence

    (conftest_repo / "other" / "conftest.py").write_text("")
    git(conftest_repo, "commit", "-qam", "other/ fixed; tests/docs still broken")
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(list(values))")})
    got = _impacted(run_gates(conftest_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                              graph=index(conftest_repo), options=DYNAMIC))
    assert got.status == "accept", got
    assert "tests/docs/test_docs.py" in got.details["targets"]
    assert got.details["conftest_dropped"] == ["tests/docs/conftest.py"]
    assert ("not run: the tests below tests/docs/conftest.py, which aborts pytest"
            in got.evidence)
