"""The coordinator API's dispatch on Dagster's engine: ``POST /v1/jobs/dispatch`` submits a run
of the campaign's plan job (with the code location's origin, through the run queue and a daemon
the launcher starts), nothing runs in the API process, and the outcome is still recorded as
``job.finished``; a task that names no campaign stays queued."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from fleet.api import create_app
from fleet.store import open_store
from fleet.types import JOB_FINISHED
from fleet_pipelines.definitions import build_campaigns, build_definitions
from fleet_pipelines.engine.launcher import SubmittingJobLauncher
from fleet_pipelines.jobs import JOB_ID_TAG, ledger_recorder
from tests.engine.conftest import embedded_engine

pytestmark = [pytest.mark.slow]


def test_dispatch_submits_a_run_and_records_its_outcome(tmp_path: Path, git_repo: Path) -> None:
    from dagster import DagsterRunStatus

    lines: list[str] = []
    with embedded_engine(tmp_path, git_repo, lines.append) as (settings, instance, engine), \
            open_store(settings.store_url) as store:
        defs = build_definitions(settings)
        launcher = SubmittingJobLauncher(engine, build_campaigns(settings),
                                         ledger_recorder(defs))
        try:
            token, _ = store.tokens.create("ci", ["jobs"])
            client = TestClient(create_app(store, git_repo, launcher=launcher))
            headers = {"Authorization": f"Bearer {token}"}
            response = client.post("/v1/jobs/dispatch", headers=headers, json={
                "task": "yaml-safe-load", "target_files": ["README.md"]})
            assert response.status_code == 200, response.text
            job_id = response.json()["job_id"]
            assert launcher.join(timeout=600)
            finished = store.ledger.events(kind=JOB_FINISHED, unit=job_id)
            assert len(finished) == 1 and finished[0].payload["status"] == "succeeded"
            run = instance.get_run_by_id(finished[0].payload["run_id"])
            assert run is not None and run.status == DagsterRunStatus.SUCCESS
            assert run.tags[JOB_ID_TAG] == job_id and run.job_name == "plan_yaml_safe_load_job"
            assert run.remote_job_origin is not None  # submitted: the UI can re-execute it
            pids = {r.dagster_event.pid for r in instance.all_logs(run.run_id) if r.dagster_event}
            assert pids and os.getpid() not in pids  # it ran in a run worker, not in the API
            assert any("started one" in line for line in lines)  # no daemon served it
            queued = client.post("/v1/jobs/dispatch", headers=headers, json={
                "task": "not a campaign", "target_files": ["README.md"]})
            status = client.get(f"/v1/jobs/{queued.json()['job_id']}", headers=headers).json()
            assert status["run_id"] is None and status["status"] == "queued"
        finally:
            launcher.close()
