"""Integration on a repository whose own suite already fails on the base (a test needing a
module that is not installed, as in most third-party checkouts): the combination is judged
against the base's failures, so a patch that breaks a test that passed is still bisected out,
and pre-existing failures are not blamed on anyone."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.integrate import integrate, pytest_runner
from fleet.store import Store
from fleet.types import Acquired, LeaseRequest
from fleet.unit import UnitResult, record_result
from sandbox import Sandbox
from tests.conftest import commit_files, git

pytestmark = [pytest.mark.sandbox]

FILES = {
    "calc/__init__.py": "",
    "calc/rates.py": "def rate():\n    return 5\n",
    "calc/fees.py": "def fee():\n    return 3\n",
    "tests/test_calc.py": (
        "from calc.fees import fee\nfrom calc.rates import rate\n\n\n"
        "def test_rate():\n    assert rate() == 5\n\n\n"
        "def test_fee():\n    assert fee() == 3\n"
    ),
    "tests/test_needs_nose.py": "import nose_is_not_installed\n\n\ndef test_x():\n    pass\n",
    "tests/test_always_fails.py": "def test_broken():\n    assert False\n",
}




@pytest.fixture
def repo(git_repo: Path) -> Path:
    return commit_files(git_repo, FILES, "calc with a suite that already fails")


def _unit(store: Store, repo: Path, key: str, rank: int, symbol: str, path: str,
          text: str) -> UnitResult:
    base = git(repo, "rev-parse", "main").strip()
    got = store.leases.acquire_all(f"t:{key}", key, [LeaseRequest(symbol, "write", rank)],
                                   60.0, 5.0)
    assert isinstance(got, Acquired)
    store.leases.release(f"t:{key}")
    branch = f"fleet/calc/{key}"
    git(repo, "branch", branch, base)
    tree = repo.parent / f"wt-{key}"
    git(repo, "worktree", "add", "-q", str(tree), branch)
    (tree / path).write_text(text)
    git(tree, "commit", "-q", "-am", f"unit {key}")
    commit = git(tree, "rev-parse", "HEAD").strip()
    git(repo, "worktree", "remove", str(tree))
    result = UnitResult(unit=key, campaign="calc", status="verified", base_commit=base, rank=rank,
                        branch=branch, commit=commit, grants=got.grants, paths=(path,))
    record_result(store.ledger, result, "test")
    return result


def test_only_what_breaks_relative_to_the_base_is_a_semantic_conflict(
    repo: Path, store: Store, bwrap: Sandbox
) -> None:
    good = _unit(store, repo, "a", 0, "calc/rates.py::rate", "calc/rates.py",
                 "def rate():\n    return int(5)\n")
    bad = _unit(store, repo, "b", 1, "calc/fees.py::fee", "calc/fees.py",
                "def fee():\n    return 4\n")
    result = integrate(repo, [bad, good], base_branch="main", branch="fleet/calc/integration",
                       leases=store.leases, ledger=store.ledger, run_tests=pytest_runner(bwrap))
    assert result.merged == ("a",)
    assert result.semantic_conflicts == ("b",)
    assert result.base_tests is not None and not result.base_tests.passed
    assert result.tests is not None and not result.tests.passed  # the base's own failures stay
    assert result.new_failures == ()
    [event] = [e for e in store.ledger.events(kind="integration.finished")]
    assert event.payload["base_tests_passed"] is False and event.payload["new_failures"] == []


def test_pre_existing_failures_are_not_blamed_on_a_patch(
    repo: Path, store: Store, bwrap: Sandbox
) -> None:
    good = _unit(store, repo, "a", 0, "calc/rates.py::rate", "calc/rates.py",
                 "def rate():\n    return int(5)\n")
    result = integrate(repo, [good], base_branch="main", branch="fleet/calc/integration",
                       leases=store.leases, ledger=store.ledger, run_tests=pytest_runner(bwrap))
    assert result.merged == ("a",) and result.semantic_conflicts == ()
    assert result.new_failures == ()
    assert result.test_runs == 2  # the combination, then the base once: no bisection
