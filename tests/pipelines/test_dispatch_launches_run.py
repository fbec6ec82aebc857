"""``POST /v1/jobs/dispatch`` of the coordinator API launches a real Dagster run through
``DagsterJobLauncher``, planning only the dispatched files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRunStatus
from fastapi.testclient import TestClient

from fleet.api import create_app
from fleet.store import open_store
from fleet.unit import load_units
from fleet_pipelines.jobs import JOB_ID_TAG
from tests.pipelines._dispatch import indexed_launcher


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    (tmp_path / "dagster").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as inst:
        yield inst


def test_dispatch_runs_the_plan_job_for_the_target_files(
    tmp_path: Path, acme_repo: Path, instance: DagsterInstance
) -> None:
    settings, launcher = indexed_launcher(tmp_path, acme_repo, instance)
    with open_store(settings.store_url) as store:
        token, _ = store.tokens.create("ci", ["jobs"])
        client = TestClient(create_app(store, acme_repo, launcher=launcher))
        headers = {"Authorization": f"Bearer {token}"}
        response = client.post("/v1/jobs/dispatch", headers=headers, json={
            "task": "yaml-safe-load", "target_files": ["billing/rates.py"]})
        assert response.status_code == 200, response.text
        job_id = response.json()["job_id"]
        launcher.join(timeout=120)
        status = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
        run = instance.get_run_by_id(status["run_id"])
        assert run is not None and run.status == DagsterRunStatus.SUCCESS
        assert run.tags[JOB_ID_TAG] == job_id and run.job_name == "plan_yaml_safe_load_job"
        units = load_units(store.ledger, "yaml-safe-load")
        assert units and {p for u in units for p in u.paths} == {"billing/rates.py"}
        assert instance.get_dynamic_partitions("yaml_safe_load_units") == [u.key for u in units]
        # a task that is not a campaign stays queued, with no run
        other = client.post("/v1/jobs/dispatch", headers=headers, json={
            "task": "refactor the billing module", "target_files": ["billing/rates.py"]})
        assert client.get(f"/v1/jobs/{other.json()['job_id']}",
                          headers=headers).json()["run_id"] is None
