"""A dispatched job's Dagster run ends in a recorded outcome (``job.finished`` in the ledger,
with the first line of the failure), and the base branch defaults to the repository's
checked-out branch (``master`` here), not ``main``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance, DagsterRunStatus
from fastapi.testclient import TestClient

from assets import SYMBOL_GRAPH
from fleet.api import create_app
from fleet.store import Store, open_store
from fleet.types import JOB_FINISHED
from fleet_pipelines.definitions import build_campaigns, build_definitions
from fleet_pipelines.jobs import DagsterJobLauncher
from fleet_pipelines.resources import FleetSettings, default_base_branch
from tests.conftest import git


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    (tmp_path / "dagster").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as inst:
        yield inst


def _dispatch(settings: FleetSettings, repo: Path, instance: DagsterInstance,
              store: Store) -> tuple[str, dict[str, Any]]:
    """Dispatch the yaml-safe-load job through the API, wait for its run, return the job id and
    the payload of its ``job.finished`` event."""
    defs = build_definitions(settings)
    launcher = DagsterJobLauncher(defs, build_campaigns(settings), instance)
    token, _ = store.tokens.create("ci", ["jobs"])
    client = TestClient(create_app(store, repo, launcher=launcher))
    headers = {"Authorization": f"Bearer {token}"}
    response = client.post("/v1/jobs/dispatch", headers=headers, json={
        "task": "yaml-safe-load", "target_files": ["README.md"]})
    assert response.status_code == 200, response.text
    job_id = response.json()["job_id"]
    launcher.join(timeout=120)
    status = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    finished = store.ledger.events(kind=JOB_FINISHED, unit=job_id)
    assert len(finished) == 1
    assert finished[0].payload["run_id"] == status["run_id"]
    # the API's job status follows its run, with the run's reason when it failed
    assert status["status"] == finished[0].payload["status"]
    assert status["error"] == finished[0].payload["error"]
    return job_id, finished[0].payload


def _master_repo(repo: Path) -> Path:
    git(repo, "branch", "-m", "main", "master")
    return repo


def test_base_branch_defaults_to_the_checked_out_branch(
    tmp_path: Path, git_repo: Path, instance: DagsterInstance
) -> None:
    repo = _master_repo(git_repo)
    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "fleet"),
                                       "FLEET_REPO": str(repo),
                                       "FLEET_CAMPAIGNS": "yaml-safe-load"})
    assert settings.base_branch == "master"
    with open_store(settings.store_url) as store:
        job_id, outcome = _dispatch(settings, repo, instance, store)
    # ledger events carry the repository they belong to (root@first commit without a remote)
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert outcome.pop("repository") == f"{repo.resolve()}@{first[:12]}"
    assert outcome == {"job_id": job_id, "run_id": outcome["run_id"], "status": "succeeded",
                       "error": None}
    run = instance.get_run_by_id(outcome["run_id"])
    assert run is not None and run.status == DagsterRunStatus.SUCCESS
    event = instance.get_latest_materialization_event(SYMBOL_GRAPH)
    assert event is not None and event.asset_materialization is not None
    # the index ran on master's head
    assert event.asset_materialization.metadata["commit"].value == git(
        repo, "rev-parse", "master").strip()


def test_a_failed_run_fails_its_job_with_the_reason(
    tmp_path: Path, git_repo: Path, instance: DagsterInstance
) -> None:
    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "fleet"),
                                       "FLEET_REPO": str(git_repo),
                                       "FLEET_BASE_BRANCH": "trunk",
                                       "FLEET_CAMPAIGNS": "yaml-safe-load"})
    with open_store(settings.store_url) as store:
        job_id, outcome = _dispatch(settings, git_repo, instance, store)
    assert outcome["status"] == "failed" and outcome["job_id"] == job_id
    error = outcome["error"]
    assert error.startswith("symbol_graph: fleet.errors.ConfigError: base branch 'trunk' "
                            "does not exist in the repository")
    assert str(git_repo.resolve()) in error and "\n" not in error
    assert "CalledProcessError" not in error
    run = instance.get_run_by_id(outcome["run_id"])
    assert run is not None and run.status == DagsterRunStatus.FAILURE


def test_detached_head_falls_back_to_main_and_says_so(
    git_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    git(git_repo, "checkout", "-q", "--detach")
    with caplog.at_level(logging.WARNING, logger="fleet_pipelines.settings"):
        assert default_base_branch(git_repo) == "main"
    assert "is detached" in caplog.text and str(git_repo) in caplog.text
    assert FleetSettings.from_env({"FLEET_REPO": str(git_repo),
                                   "FLEET_HOME": str(git_repo.parent / "h"),
                                   "FLEET_BASE_BRANCH": "release"}).base_branch == "release"
