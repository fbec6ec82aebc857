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


def test_a_selected_test_file_that_does_not_collect_makes_it_unknown(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    """Issue 17, defect 1: "1 error, 173 passed before and after" was accepted although the
    erroring file was one the evidence needed. A selected test file that errors at collection
    makes the verdict ``unknown``, however many other tests pass (this test used to expect
    ``accept``); one that the evidence does not need (the graph's reaching tests are elsewhere)
    leaves the passing tests as evidence."""
    (lib_repo / "tests" / "test_broken.py").write_text(BROKEN_TESTS)
    git(lib_repo, "add", "-A")
    git(lib_repo, "commit", "-qm", "one broken test file beside the working one")
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(list(values))")})
    [got] = [v for v in run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                                  options=DYNAMIC) if v.gate == "impacted_tests"]
    assert got.status == "unknown", got
    assert "3 passed" in got.evidence and "1 error" in got.evidence
    assert ("a test file the evidence needs errors at collection, before and after the patch, "
            "so its tests do not run: tests/test_broken.py: ModuleNotFoundError: No module "
            "named 'nose_that_is_not_installed'") in got.evidence
    # The broken file only names `Account` in a comment: selected by name, reached by no test
    # of the graph, so the evidence (test_deposit in tests/test_lib.py) does not need it.
    (lib_repo / "tests" / "test_broken.py").write_text(
        "import nose_that_is_not_installed  # checks Account elsewhere\n")
    git(lib_repo, "commit", "-qam", "the broken file reaches nothing")
    patch = make_patch({"lib.py": LIB.replace("+ amount", "+ int(amount)")})
    [got] = [v for v in run_gates(lib_repo, patch, ["lib.py::Account.deposit"],
                                  sandbox=bwrap_sandbox, graph=index(lib_repo), options=DYNAMIC)
             if v.gate == "impacted_tests"]
    assert got.status == "accept", got
    assert "tests/test_broken.py" in got.details["targets"]
    assert "tests/test_lib.py::test_deposit" in got.details["evidence"]


def test_a_changed_test_file_that_does_not_import_is_never_accepted(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    """Issue 17, defect 1 as found: the unit changed a test file that errors at import (a
    dependency missing), so none of its tests ran, and the passes of another file verified it."""
    (lib_repo / "tests" / "test_more.py").write_text(BROKEN_TESTS)
    git(lib_repo, "add", "-A")
    git(lib_repo, "commit", "-qm", "a test file that needs a missing module")
    changed = BROKEN_TESTS.replace("== 3", "== 1 + 2")
    patch = make_patch({"tests/test_more.py": changed,
                        "lib.py": LIB.replace("return sum(values)", "return sum(list(values))")})
    write = ["lib.py::total", "tests/test_more.py::test_total"]
    [got] = [v for v in run_gates(lib_repo, patch, write, sandbox=bwrap_sandbox,
                                  graph=index(lib_repo), options=DYNAMIC)
             if v.gate == "impacted_tests"]
    assert got.status == "unknown", got
    assert ("a changed test file must itself run, and after the patch it did not: "
            "tests/test_more.py (errors at collection: ModuleNotFoundError") in got.evidence


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
