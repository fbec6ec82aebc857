"""Third-party repositories whose own tests cannot run here (a missing test dependency such as
``nose``, a Python 2 suite) must not count as evidence for a patch: found on freezegun 0.3.9,
where a patch turning naive ``utcnow()`` into aware values was verified because its tests
errored before and after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.graph import index
from fleet.verify import GateOptions, run_gates
from sandbox import Sandbox

from .conftest import LIB, MakePatch, git

pytestmark = pytest.mark.sandbox

DYNAMIC = GateOptions(fail_fast=False, skip=frozenset({"review"}))
BROKEN_TESTS = """from nose_that_is_not_installed import skip  # the suite's own dependency
from lib import total


def test_total():
    assert total([1, 2]) == 3
"""


def test_tests_that_error_before_the_patch_are_no_evidence(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    (lib_repo / "tests" / "test_lib.py").write_text(BROKEN_TESTS)
    git(lib_repo, "commit", "-qam", "tests need a missing module")
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(values) + 1")})
    [got] = [v for v in run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                                  options=DYNAMIC) if v.gate == "impacted_tests"]
    assert got.status == "unknown", got
    assert ("no impacted test passes, before or after the patch (1 error before, 1 error after)"
            in got.evidence)
    assert "nose_that_is_not_installed" in got.evidence


def test_one_passing_test_is_still_evidence(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    (lib_repo / "tests" / "test_broken.py").write_text(BROKEN_TESTS)
    git(lib_repo, "add", "-A")
    git(lib_repo, "commit", "-qm", "one broken test file beside the working one")
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(list(values))")})
    [got] = [v for v in run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                                  options=DYNAMIC) if v.gate == "impacted_tests"]
    assert got.status == "accept", got
    assert "3 passed" in got.evidence and "1 error" in got.evidence


def test_an_unrelated_passing_test_is_no_evidence_either(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    """PyYAML 3.13: the tests that call the patched code take a ``unicode_filename`` argument
    (their own runner's, not a pytest fixture) and error; one unrelated test passed, and the
    patch was verified on it."""
    (lib_repo / "tests" / "test_lib.py").write_text(
        "from lib import Account, total\n\n\n"
        "def test_total(unicode_filename):\n    assert total([1, 2]) == 3\n\n\n"
        "def test_account():\n    assert Account().deposit(1) == 1\n"
    )
    git(lib_repo, "commit", "-qam", "a test that needs its own runner")
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(values) + 1")})
    graph = index(lib_repo)
    [got] = [v for v in run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                                  graph=graph, options=DYNAMIC) if v.gate == "impacted_tests"]
    assert got.status == "unknown", got
    assert ("none of the 1 test(s) that reach the patched code passes, before or after it"
            in got.evidence)
    assert got.details["reaching"] == ["tests/test_lib.py::test_total"]
    [deposit] = [v for v in run_gates(
        lib_repo, make_patch({"lib.py": LIB.replace("+ amount", "+ int(amount)")}),
        ["lib.py::Account.deposit"], sandbox=bwrap_sandbox, graph=graph, options=DYNAMIC,
    ) if v.gate == "impacted_tests"]
    assert deposit.status == "accept", deposit  # test_account reaches it and passes
