"""A retry the Dagster daemon misses is made by the process that follows the run.

Dagster stores a run's failure event before it writes the run's status and its
``dagster/will_retry`` tag; a daemon whose event log consumer reads the event in between sees a
run still starting, does not retry it, and moves its cursor past the event (CI met it: a sweep
waited 300 s for a retry that never came). A daemon started with no cursor of its own also
ignores every failure before it started. Here the run fails before any daemon ran (the second
case, which is deterministic): the engine following the run must make the retry itself, once,
as the daemon does, and follow it to its end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_pipelines.commands._sweep import instance_for
from fleet_pipelines.engine import ensure_run_queue, submitting
from fleet_pipelines.engine._submit import submit
from fleet_pipelines.resources import FleetSettings
from fleet_pipelines.storage import ensure_instance_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_a_retry_the_daemon_missed_is_made_once_by_the_follower(
        tmp_path: Path, git_repo: Path) -> None:
    from dagster import DagsterRunStatus, RunsFilter

    from assets._dagster_private import (
        AUTO_RETRY_RUN_ID_TAG,
        RUN_FAILURE_REASON_TAG,
        WILL_RETRY_TAG,
    )

    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "fleet"),
                                       "FLEET_REPO": str(git_repo),
                                       "FLEET_CAMPAIGNS": "yaml-safe-load"})
    settings.save()

    def prepare(home: Path) -> None:
        ensure_instance_config(home)
        ensure_run_queue(home)

    lines: list[str] = []
    with instance_for(tmp_path / "dagster", prepare) as instance, \
            submitting(instance, settings.env(), lines.append) as engine:
        run_id = submit(engine.process, "index_code_job")  # queued; no daemon runs yet
        # its start timed out, as the monitoring daemon fails such a run
        instance.add_run_tags(run_id, {RUN_FAILURE_REASON_TAG: "START_TIMEOUT"})
        queued = instance.get_run_by_id(run_id)
        assert queued is not None
        instance.report_run_failed(queued, "Run timed out due to taking longer than 15 seconds "
                                           "to start.")
        failed = instance.get_run_by_id(run_id)
        assert failed is not None and failed.status == DagsterRunStatus.FAILURE
        assert failed.tags[WILL_RETRY_TAG] == "true"  # Dagster decided to retry it
        engine.missed_s = 8.0  # the daemon's consumer looks every 5 s
        done = engine.wait(run_id)  # starts the daemon, which ignores the older failure
        assert done.success, (done.messages, lines)
        assert len(done.attempts) == 2 and done.attempts[0] == run_id, done.attempts
        retry = instance.get_run_by_id(done.attempts[1])
        assert retry is not None and retry.parent_run_id == run_id
        assert retry.tags.get("dagster/retry_number") == "1"  # tagged as the daemon tags it
        parent = instance.get_run_by_id(run_id)
        assert parent is not None and parent.tags[AUTO_RETRY_RUN_ID_TAG] == retry.run_id
        runs = instance.get_runs(RunsFilter(job_name="index_code_job"))
        assert sorted(r.run_id for r in runs) == sorted(done.attempts)  # one retry, no other
    text = " ".join(" ".join(lines).split())
    assert f"index_code_job run {run_id[:8]}: the Dagster daemon has not retried it 8 s " \
           "after it failed" in text, text
    assert f"Dagster retries it as run {retry.run_id[:8]}" in text, text


def test_the_dispatch_launcher_makes_a_missed_retry_and_records_the_retrys_outcome(
        tmp_path: Path, git_repo: Path) -> None:
    from dagster import DagsterRunStatus

    from assets._dagster_private import RUN_FAILURE_REASON_TAG
    from fleet.store import open_store
    from fleet.types import JOB_FINISHED
    from fleet_pipelines.definitions import build_campaigns, build_definitions
    from fleet_pipelines.engine.launcher import SubmittingJobLauncher
    from fleet_pipelines.jobs import ledger_recorder

    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "fleet"),
                                       "FLEET_REPO": str(git_repo),
                                       "FLEET_CAMPAIGNS": "yaml-safe-load"})
    settings.save()

    def prepare(home: Path) -> None:
        ensure_instance_config(home)
        ensure_run_queue(home)

    with instance_for(tmp_path / "dagster", prepare) as instance, \
            submitting(instance, settings.env(), print) as engine, \
            open_store(settings.store_url) as store:
        run_id = submit(engine.process, "plan_yaml_safe_load_job",
                        {"fleet/campaign": "yaml-safe-load"})
        instance.add_run_tags(run_id, {RUN_FAILURE_REASON_TAG: "START_TIMEOUT"})
        queued = instance.get_run_by_id(run_id)
        assert queued is not None
        instance.report_run_failed(queued, "Run timed out due to taking longer than 15 seconds "
                                           "to start.")
        engine.missed_s = 8.0
        # the launcher starts a daemon now: one that never saw the failure
        launcher = SubmittingJobLauncher(engine, build_campaigns(settings),
                                         ledger_recorder(build_definitions(settings)))
        try:
            launcher.watch(run_id, "job-1")
            assert launcher.join(timeout=400)
        finally:
            launcher.close()
        finished = store.ledger.events(kind=JOB_FINISHED, unit="job-1")
        assert len(finished) == 1 and finished[0].payload["status"] == "succeeded", finished
        retry = instance.get_run_by_id(finished[0].payload["run_id"])
        assert retry is not None and retry.parent_run_id == run_id
        assert retry.status == DagsterRunStatus.SUCCESS
