"""A project whose tests live in a root ``tests.py`` (itsdangerous 0.24, bottle): a bare
``pytest`` collects nothing there. Outside check: a sweep said "tests pass" and the impacted-tests
gate accepted "no tests before, no tests after" while 89 tests existed and were never run.
Now the file is a test file, a bare run names it, and an empty run is never evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from assets._fleet import self_merge
from fleet.integrate import pytest_runner
from fleet.types import Verdict
from fleet.verify import GateOptions, run_gates
from fleet.verify.execution import run_pytest, unlisted_test_files
from fleet.verify.gates import is_test_path
from fleet_pipelines.commands.pipeline import integration_tests
from sandbox import Sandbox
from tests.conftest import commit_files

from .conftest import edit_diff, git

LIB = "def double(x):\n    return 2 * x\n"
TESTS = (
    "import unittest\n\nfrom mylib import double\n\n\n"
    "class DoubleTest(unittest.TestCase):\n"
    "    def test_double(self):\n        self.assertEqual(double(2), 4)\n\n"
    "    def test_zero(self):\n        self.assertEqual(double(0), 0)\n"
)
DYNAMIC = GateOptions(fail_fast=False, skip=frozenset({"review"}))


def _repo(root: Path, files: dict[str, str]) -> Path:
    return commit_files(root, files, "init")


def _impacted(verdicts: list[Verdict]) -> Verdict:
    return next(v for v in verdicts if v.gate == "impacted_tests")


def test_root_tests_modules_are_test_files(tmp_path: Path) -> None:
    assert is_test_path("tests.py") and is_test_path("app/tests.py") and is_test_path("test.py")
    assert not is_test_path("werkzeug/test.py")  # library code: werkzeug's test client
    assert not is_test_path("testing.py") and not is_test_path("pkg/contest.py")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "tests.py").write_text("")
    (tmp_path / "tests.py").write_text("")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "tests.py").write_text("")
    (tmp_path / "app" / "test.py").write_text("")
    assert unlisted_test_files(tmp_path) == ["app/tests.py", "tests.py"]
    (tmp_path / "test.py").write_text("")
    (tmp_path / "pkg" / "tests").mkdir(parents=True)
    for name in ("__init__.py", "conftest.py", "search_tests.py"):  # mkdocs 0.14's layout
        (tmp_path / "pkg" / "tests" / name).write_text("")
    assert unlisted_test_files(tmp_path) == ["app/tests.py", "pkg/tests/search_tests.py",
                                             "test.py", "tests.py"]


@pytest.mark.sandbox
def test_a_behaviour_change_is_caught_by_a_root_tests_py(
    git_repo: Path, bwrap_sandbox: Sandbox
) -> None:
    repo = _repo(git_repo, {"mylib.py": LIB, "tests.py": TESTS})
    patch = edit_diff(repo, "mylib.py", LIB.replace("2 * x", "2 * x + 1"))
    got = _impacted(run_gates(repo, patch, ["mylib.py::double"], sandbox=bwrap_sandbox,
                              options=DYNAMIC))
    assert got.status == "reject", got
    assert got.details["targets"] == ["tests.py"]
    assert "tests.py::test_double passed before and failed after" in got.evidence
    assert got.details["before"] == "2 passed"


@pytest.mark.sandbox
def test_a_bare_run_names_the_root_tests_py(git_repo: Path, bwrap_sandbox: Sandbox) -> None:
    repo = _repo(git_repo, {"mylib.py": LIB, "tests.py": TESTS})
    bare = run_pytest(bwrap_sandbox, repo, [])
    assert sorted(o for o in bare.outcomes.values()) == ["passed", "passed"]
    suite = pytest_runner(bwrap_sandbox)(repo)
    assert suite.passed and suite.outcomes is not None and len(suite.outcomes) == 2


@pytest.mark.sandbox
def test_no_test_at_all_is_no_evidence(git_repo: Path, bwrap_sandbox: Sandbox) -> None:
    repo = _repo(git_repo, {"mylib.py": LIB})
    patch = edit_diff(repo, "mylib.py", LIB.replace("2 * x", "x + x"))
    got = _impacted(run_gates(repo, patch, ["mylib.py::double"], sandbox=bwrap_sandbox,
                              options=DYNAMIC))
    assert got.status == "unknown", got
    assert "pytest collected no test before or after the patch" in got.evidence
    suite = pytest_runner(bwrap_sandbox)(repo)
    assert suite.passed and suite.outcomes == {}


def test_an_empty_integration_run_is_reported_and_never_self_merged(git_repo: Path) -> None:
    repo = _repo(git_repo, {"mylib.py": LIB})
    git(repo, "checkout", "-q", "-b", "fleet/c/integration")
    (repo / "mylib.py").write_text(LIB.replace("2 * x", "x + x"))
    git(repo, "commit", "-q", "-am", "integrated")
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    base = git(repo, "rev-parse", "main").strip()
    empty = {"tests_passed": True, "tests_collected": 0, "new_failures": []}
    assert integration_tests(empty).startswith("collected none")
    merge, checkout = self_merge(repo, "main", "fleet/c/integration", empty)
    assert not merge.merged and "collected no test" in merge.reason
    assert checkout == repo
    assert git(repo, "rev-parse", "main").strip() == base
    assert (repo / "mylib.py").read_text() == LIB
    ran = {**empty, "tests_collected": 2}
    assert integration_tests(ran) == "pass"
    merge, _ = self_merge(repo, "main", "fleet/c/integration", ran)
    assert merge.merged and git(repo, "rev-parse", "main").strip() == head
