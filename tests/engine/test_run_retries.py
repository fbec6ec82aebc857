"""A run whose launch its daemon never finished is retried, and ``fleet sweep`` follows it there.

The fault, as the distributed daemon-kill test met it in CI: the Dagster daemon had dequeued a run
(its status ``STARTING``) and was inside the launch when it was killed with -9. No run worker ever
started, so nothing would end the run. Here the daemon and everything it started (its code
server, a run worker being spawned) are killed the moment a run turns ``STARTING`` — well before
a run worker could import the definitions and report the run started — and the sweep must still
end verified: it starts a new daemon, whose run monitoring fails the run after the instance's
start timeout, whose run retries launch it again, and the sweep follows the retry.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleet_pipelines.engine import ensure_run_queue, run_queue_config
from fleet_pipelines.storage import instance_config
from tests.conftest import commit_files
from tests.engine.test_submitted_sweep import CONF_FILES


def test_an_older_embedded_instance_gets_monitoring_and_retries(tmp_path: Path) -> None:
    home = tmp_path / "dagster"
    home.mkdir()
    older = {**instance_config(home), **run_queue_config()}
    del older["run_monitoring"], older["run_retries"]  # as fleet wrote it before
    older["concurrency"]["pools"]["default_limit"] = 5  # the user's own limit
    (home / "dagster.yaml").write_text(yaml.safe_dump(older))
    assert ensure_run_queue(home)
    written = yaml.safe_load((home / "dagster.yaml").read_text())
    assert written["run_monitoring"] == run_queue_config()["run_monitoring"]
    assert written["run_retries"]["retry_on_asset_or_op_failure"] is False
    assert written["concurrency"]["pools"]["default_limit"] == 5  # kept
    assert not ensure_run_queue(home)  # nothing more to add
    deployment = tmp_path / "deployment"
    deployment.mkdir()
    (deployment / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    assert not ensure_run_queue(deployment)  # a deployment's own file is never touched


def _wait(what: str, check: Callable[[], Any], sweep: subprocess.Popen[bytes], log: Path,
          timeout_s: float = 300, poll_s: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        assert sweep.poll() is None, f"the sweep ended before {what}:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"no {what} after {timeout_s} s:\n{log.read_text()}"
        time.sleep(poll_s)


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a_launch_lost_with_its_daemon_is_retried_and_the_sweep_ends_verified(
        git_repo: Path, tmp_path: Path) -> None:
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    repo = commit_files(git_repo, CONF_FILES, "conf")
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    # a test instance's monitoring: the stuck run fails 15 s after it turned STARTING, checked
    # every 2 s (the default's 10 s poll was up to 10 s more of the test asleep)
    config = {**instance_config(dagster_home),
              **run_queue_config(start_timeout_s=15, monitor_poll_s=2)}
    (dagster_home / "dagster.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    log = tmp_path / "sweep.log"
    fleet = Path(sys.executable).with_name("fleet")
    with log.open("wb") as out:
        sweep = subprocess.Popen(
            [str(fleet), "sweep", str(repo), "-c", "yaml-safe-load", "--sandbox", "bwrap",
             "--home", str(tmp_path / "fleet")],
            env={**os.environ, "DAGSTER_HOME": str(dagster_home), "COLUMNS": "200"},
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        pidfile = dagster_home / "fleet-daemon.pid"
        daemon = int(_wait("daemon", lambda: pidfile.is_file() and pidfile.read_text().strip(),
                           sweep, log))
        with DagsterInstance.from_config(str(dagster_home)) as instance:
            starting = RunsFilter(statuses=[DagsterRunStatus.STARTING])
            (stuck,) = _wait("run turning STARTING", lambda: instance.get_runs(starting), sweep,
                             log, poll_s=0.01)
            # mid-launch: the daemon, its code server (started beside it, its own group), all
            code = int((dagster_home / "fleet-code-server.pid").read_text())
            os.killpg(daemon, signal.SIGKILL)
            os.killpg(code, signal.SIGKILL)
            assert sweep.wait(900) == 0, log.read_text()

            failed = instance.get_run_by_id(stuck.run_id)
            assert failed is not None and failed.status == DagsterRunStatus.FAILURE
            assert failed.tags["dagster/failure_reason"] == "START_TIMEOUT"
            retry = instance.get_run_by_id(failed.tags["dagster/auto_retry_run_id"])
            assert retry is not None and retry.status == DagsterRunStatus.SUCCESS
            assert retry.parent_run_id == stuck.run_id and retry.job_name == stuck.job_name
            failures = instance.get_runs(RunsFilter(statuses=[DagsterRunStatus.FAILURE]))
            assert [r.run_id for r in failures] == [stuck.run_id]  # nothing else failed
    finally:
        if sweep.poll() is None:
            sweep.kill()
        sweep.wait()
    text = " ".join(log.read_text().split())
    assert f"run {stuck.run_id[:8]} failed (start timeout): Dagster retries it as run " \
           f"{retry.run_id[:8]}" in text, text
    assert "the Dagster daemon of" in text and "exited: restarted it" in text
    assert "verified, integrated" in text
