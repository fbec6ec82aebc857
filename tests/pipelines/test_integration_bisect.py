"""Integration over real git, a real SQLite store (leases, fencing tokens, ledger), the real
structural merge and pytest in a real bubblewrap sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.integrate import integrate, pytest_runner
from fleet.store import Store
from fleet.types import Acquired, LeaseRequest
from fleet.unit import UnitResult, latest_results, record_result
from sandbox import Sandbox
from tests.conftest import git

pytestmark = [pytest.mark.sandbox]

def _unit(store: Store, repo: Path, key: str, rank: int, symbol: str,
          edits: dict[str, str]) -> UnitResult:
    """A unit's verified patch: leases taken through the store, a commit on its own branch."""
    base = git(repo, "rev-parse", "main").strip()
    holder = f"test:{key}"
    got = store.leases.acquire_all(holder, key, [LeaseRequest(symbol, "write", rank)], 60.0, 5.0)
    assert isinstance(got, Acquired)
    store.leases.release(holder)
    branch = f"fleet/calc/{key}"
    git(repo, "branch", branch, base)
    tree = repo.parent / f"wt-{key}"
    git(repo, "worktree", "add", "-q", str(tree), branch)
    for rel, text in edits.items():
        (tree / rel).write_text(text)
    git(tree, "commit", "-q", "-am", f"unit {key}")
    commit = git(tree, "rev-parse", "HEAD").strip()
    git(repo, "worktree", "remove", str(tree))
    result = UnitResult(unit=key, campaign="calc", status="verified", base_commit=base, rank=rank,
                        branch=branch, commit=commit, grants=got.grants,
                        paths=tuple(sorted(edits)))
    record_result(store.ledger, result, "test")
    return result


def test_integration_merges_in_lock_order_and_bisects_out_the_semantic_conflict(
    calc_repo: Path, store: Store, bwrap: Sandbox
) -> None:
    a = _unit(store, calc_repo, "a", 0, "calc/rates.py::rate",
              {"calc/rates.py": "def rate():\n    return 6\n"})
    # b and c edit two functions of one file: the merge must combine them.
    b = _unit(store, calc_repo, "b", 1, "calc/fees.py::fee",
              {"calc/fees.py": "def fee():\n    return 6\n\n\ndef waiver():\n    return 0\n"})
    c = _unit(store, calc_repo, "c", 2, "calc/fees.py::waiver",
              {"calc/fees.py": "def fee():\n    return 3\n\n\ndef waiver():\n    return 1\n"})
    d = _unit(store, calc_repo, "d", 3, "calc/names.py::NAME",
              {"calc/names.py": '"""Names."""\n\nNAME = "calculator"\n'})
    # e's lease on NAME was lost and granted again to someone else: its token is stale.
    e = _unit(store, calc_repo, "e", 4, "calc/names.py::<module>",
              {"calc/names.py": '"""Names!"""\n\nNAME = "calc"\n'})
    again = store.leases.acquire_all("other", "x", [LeaseRequest("calc/names.py::<module>",
                                                                 "write")], 60.0, 5.0)
    assert isinstance(again, Acquired)
    store.leases.release("other")
    user_head = git(calc_repo, "rev-parse", "HEAD")

    result = integrate(calc_repo, [e, d, c, b, a], base_branch="main",
                       branch="fleet/calc/integration", leases=store.leases, ledger=store.ledger,
                       run_tests=pytest_runner(bwrap))

    # a+b alone: 6+6 = 12 fails; a alone passes: b is the semantic conflict; c and d merge.
    assert result.merged == ("a", "c", "d")
    assert result.semantic_conflicts == ("b",)
    assert result.stale == ("e",)
    assert result.merge_conflicts == ()
    assert result.tests is not None and result.tests.passed
    assert result.test_runs >= 3
    fees = git(calc_repo, "show", "fleet/calc/integration:calc/fees.py")
    assert "return 3" in fees and "return 1" in fees
    assert "calculator" in git(calc_repo, "show", "fleet/calc/integration:calc/names.py")
    # the user's checkout is untouched, the requeued units are pending again, the ledger verifies
    assert git(calc_repo, "rev-parse", "HEAD") == user_head
    assert git(calc_repo, "status", "--porcelain") == ""
    assert set(latest_results(store.ledger, "calc")) == {"a", "c", "d"}
    kinds = [ev.kind for ev in store.ledger.events(campaign="calc")]
    assert "integration.semantic_conflict" in kinds and "integration.stale" in kinds
    assert store.ledger.verify() == []


def test_textual_conflict_is_dropped_and_requeued(
    calc_repo: Path, store: Store, bwrap: Sandbox
) -> None:
    a = _unit(store, calc_repo, "a", 0, "calc/rates.py::rate",
              {"calc/rates.py": "def rate():\n    return 4\n"})
    # b edits the same line under another lease (fenced tokens stay current for both)
    b = _unit(store, calc_repo, "b", 1, "calc/fees.py::fee",
              {"calc/rates.py": "def rate():\n    return 5\n"})
    result = integrate(calc_repo, [a, b], base_branch="main", branch="fleet/calc/integration",
                       leases=store.leases, ledger=store.ledger, run_tests=pytest_runner(bwrap))
    assert result.merged == ("a",)
    assert result.merge_conflicts == ("b",)
    assert "return 4" in git(calc_repo, "show", "fleet/calc/integration:calc/rates.py")
    assert "b" not in latest_results(store.ledger, "calc")
    assert store.ledger.events(kind="integration.merge_conflict")[0].unit == "b"


def test_a_lost_lease_makes_the_patch_stale(
    calc_repo: Path, store: Store, bwrap: Sandbox
) -> None:
    a = _unit(store, calc_repo, "a", 0, "calc/rates.py::rate",
              {"calc/rates.py": "def rate():\n    return 4\n"})
    b = _unit(store, calc_repo, "b", 1, "calc/rates.py::rate",
              {"calc/rates.py": "def rate():\n    return 5\n"})
    result = integrate(calc_repo, [a, b], base_branch="main", branch="fleet/calc/integration",
                       leases=store.leases, ledger=store.ledger, run_tests=pytest_runner(bwrap))
    assert result.stale == ("a",) and result.merged == ("b",)
