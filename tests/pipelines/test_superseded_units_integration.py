"""Outside check on tornado 4.2: the datetime-utcnow campaign was re-planned (its coupling
changed), the unit that had put a wrong patch of ``tornado/web.py`` on the integration branch
was superseded by a unit that the gates rejected - and the sweep kept showing (and handing over)
the old integration with the superseded patch, because it only re-integrated after a newly
verified unit. Now a merged unit that is no longer planned triggers a new integration, which
takes only the planned units; an integration already merged into the base is left alone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from assets import _fleet
from fleet.store import open_store
from fleet.types import Acquired, LeaseRequest
from fleet.unit import UnitResult, record_result
from fleet_pipelines.commands._sweep import CampaignReport, SweepReport
from fleet_pipelines.commands.pipeline import print_report
from fleet_pipelines.resources import FleetSettings, SandboxResource, StoreResource
from fleet_pipelines.sensors import needs_integration
from tests.conftest import git

pytestmark = [pytest.mark.sandbox]


def _unit(store: StoreResource, repo: Path, key: str, rank: int, path: str) -> None:
    base = git(repo, "rev-parse", "main").strip()
    with open_store(store.url) as opened:
        got = opened.leases.acquire_all(f"t:{key}", key,
                                        [LeaseRequest(f"{path}::<module>", "write", rank)],
                                        60.0, 5.0)
        assert isinstance(got, Acquired)
        opened.leases.release(f"t:{key}")
        branch = f"fleet/c/{key}"
        git(repo, "branch", branch, base)
        tree = repo.parent / f"wt-{key}"
        git(repo, "worktree", "add", "-q", str(tree), branch)
        (tree / path).write_text(f"VALUE = {key!r}\n")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", f"unit {key}")
        commit = git(tree, "rev-parse", "HEAD").strip()
        git(repo, "worktree", "remove", str(tree))
        record_result(opened.ledger, UnitResult(
            unit=key, campaign="c", status="verified", base_commit=base, rank=rank,
            branch=branch, commit=commit, grants=got.grants, paths=(path,)), "test")


def test_a_superseded_unit_leaves_the_integration_branch(git_repo: Path, tmp_path: Path) -> None:
    store = StoreResource(url=f"sqlite:///{tmp_path / 'fleet.db'}")
    sandbox = SandboxResource(backend="bwrap")
    _unit(store, git_repo, "a", 0, "a.py")
    _unit(store, git_repo, "b", 1, "b.py")
    assert needs_integration(store, "c", ["a", "b"], git_repo, "main")
    first = _fleet.integrate("c", git_repo, tmp_path, "main", store, sandbox, planned=["a", "b"])
    assert sorted(first.merged) == ["a", "b"]
    assert not needs_integration(store, "c", ["a", "b"], git_repo, "main")
    # a re-plan: "b" is no longer planned (superseded), so its patch must leave the branch
    assert needs_integration(store, "c", ["a"], git_repo, "main")
    assert not needs_integration(store, "c", ["a"])  # without the plan: only new verifications
    second = _fleet.integrate("c", git_repo, tmp_path, "main", store, sandbox, planned=["a"])
    assert second.merged == ("a",)
    files = git(git_repo, "ls-tree", "--name-only", "fleet/c/integration").split()
    assert "a.py" in files and "b.py" not in files
    assert not needs_integration(store, "c", ["a"], git_repo, "main")


def test_an_integration_merged_into_the_base_is_not_redone(
    git_repo: Path, tmp_path: Path
) -> None:
    store = StoreResource(url=f"sqlite:///{tmp_path / 'fleet.db'}")
    _unit(store, git_repo, "a", 0, "a.py")
    _fleet.integrate("c", git_repo, tmp_path, "main", store, SandboxResource(backend="bwrap"),
                     planned=["a"])
    git(git_repo, "merge", "-q", "--ff-only", "fleet/c/integration")  # self-merged
    # its findings are fixed on main, so the next plan has no unit: nothing to redo
    assert not needs_integration(store, "c", [], git_repo, "main")


def test_a_sweep_that_integrated_again_is_not_nothing_new(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "home"),
                                       "FLEET_REPO": str(git_repo)})
    quiet = CampaignReport("c", integration={"branch": "fleet/c/integration", "merged": ["a"],
                                              "semantic_conflicts": [],
                                              "tests_passed": True, "tests_collected": 1,
                                              "head": "0" * 40})
    print_report(SweepReport([quiet], 1.0, 1, str(tmp_path)), settings)
    assert "nothing new" in capsys.readouterr().out
    again = dataclasses.replace(quiet, integrated=True)
    print_report(SweepReport([again], 1.0, 1, str(tmp_path)), settings)
    assert "nothing new" not in capsys.readouterr().out
