"""A retry the Dagster daemon misses is made by the process that follows the run.

Dagster stores a run's failure event before it writes the run's status and its
``dagster/will_retry`` tag; a daemon whose event log consumer reads the event in between sees a
run still starting, does not retry it, and moves its cursor past the event (CI met it: a sweep
waited 300 s for a retry that never came). A daemon started with no cursor of its own also
ignores every failure before it started. Here the run fails before any daemon ran (the second
case, which is deterministic): the engine following the run (``fleet sweep``), or the coordinator
API's dispatch launcher, must make the retry itself, once, as the daemon does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fleet_pipelines.engine._submit import submit
from tests.engine.conftest import embedded_engine

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _failed_on_a_start_timeout(instance: Any, engine: Any, job: str,
                               tags: dict[str, str] | None = None) -> str:
    """A submitted run of ``job`` failed as the monitoring daemon fails a run whose start timed
    out, before any daemon ran; Dagster decided to retry it."""
    from dagster import DagsterRunStatus

    from assets._dagster_private import RUN_FAILURE_REASON_TAG, WILL_RETRY_TAG

    run_id = submit(engine.process, job, tags)  # queued; no daemon runs yet
    instance.add_run_tags(run_id, {RUN_FAILURE_REASON_TAG: "START_TIMEOUT"})
    queued = instance.get_run_by_id(run_id)
    assert queued is not None
    instance.report_run_failed(queued, "Run timed out due to taking longer than 15 seconds to "
                                       "start.")
    failed = instance.get_run_by_id(run_id)
    assert failed is not None and failed.status == DagsterRunStatus.FAILURE
    assert failed.tags[WILL_RETRY_TAG] == "true"
    engine.missed_s = 8.0  # the daemon's consumer looks every 5 s
    return run_id


def test_a_retry_the_daemon_missed_is_made_once_by_the_follower(
        tmp_path: Path, git_repo: Path) -> None:
    from dagster import RunsFilter

    from assets._dagster_private import AUTO_RETRY_RUN_ID_TAG

    lines: list[str] = []
    with embedded_engine(tmp_path, git_repo, lines.append) as (_, instance, engine):
        run_id = _failed_on_a_start_timeout(instance, engine, "index_code_job")
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

    from fleet.store import open_store
    from fleet.types import JOB_FINISHED
    from fleet_pipelines.definitions import build_campaigns, build_definitions
    from fleet_pipelines.engine.launcher import SubmittingJobLauncher
    from fleet_pipelines.jobs import ledger_recorder

    with embedded_engine(tmp_path, git_repo) as (settings, instance, engine), \
            open_store(settings.store_url) as store:
        run_id = _failed_on_a_start_timeout(instance, engine, "plan_yaml_safe_load_job",
                                            {"fleet/campaign": "yaml-safe-load"})
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
