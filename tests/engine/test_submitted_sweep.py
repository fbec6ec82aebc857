"""``fleet sweep`` submits every run to the instance (with the code location's origin, through
the queued run coordinator and a daemon it starts itself on the embedded default) and prints the
same report; every run it made can then be re-executed the way the UI does it, through GraphQL.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fleet_pipelines.cli import main
from tests.conftest import commit_files

# a sweep of 5 runs and a re-execution of each: ~6 min on 2 idle-ish cores, ~15 under load 30
pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.timeout(2400)]

CONF_FILES = {
    "conf/__init__.py": "",
    "conf/load.py": "import yaml\n\n\ndef settings(text):\n    return yaml.load(text)\n",
    "tests/test_load.py": (
        "from conf.load import settings\n\n\n"
        "def test_settings_are_read():\n    assert settings('a: 1') == {'a': 1}\n"
    ),
}

REEXECUTE = """
mutation($parent: String!) {
  launchPipelineReexecution(reexecutionParams: {parentRunId: $parent, strategy: ALL_STEPS}) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
  }
}
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_sweep_submits_runs_that_the_ui_can_reexecute(
        git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster import DagsterInstance, DagsterRunStatus
    from dagster_graphql.test.utils import execute_dagster_graphql

    from fleet_pipelines.engine import DaemonProcess, follow, open_workspace
    from fleet_pipelines.resources import FleetSettings

    repo = commit_files(git_repo, CONF_FILES, "conf")
    dagster_home = tmp_path / "dagster"
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    home = tmp_path / "fleet"
    assert main(["sweep", str(repo), "-c", "yaml-safe-load", "--sandbox", "bwrap",
                 "--home", str(home)]) == 0
    captured = capsys.readouterr()
    assert "campaign yaml-safe-load" in captured.out and "verified, integrated" in captured.out
    err = " ".join(captured.err.split())  # the console wraps its lines
    started = re.search(r"no Dagster daemon serves .*?started one \(pid (\d+)", err)
    assert started, captured.err
    assert not _alive(int(started.group(1)))  # the daemon it started stopped with it

    with DagsterInstance.from_config(str(dagster_home)) as instance:
        runs = instance.get_runs()
        jobs = {r.job_name for r in runs}
        assert {"index_code_job", "plan_yaml_safe_load_job", "fix_yaml_safe_load_job",
                "integrate_yaml_safe_load_job"} <= jobs
        for run in runs:  # submitted: an origin to re-execute from, and through the queue
            assert run.status == DagsterRunStatus.SUCCESS, run.run_id
            assert run.remote_job_origin is not None and run.job_code_origin is not None
            assert run.remote_job_origin.location_name == "fleet_pipelines.definitions"

        # the UI's "Re-execute all": one re-execution of every run of the sweep
        monkeypatch.setenv("FLEET_HOME", str(home))  # the code location loads these settings
        for key, value in FleetSettings.from_env().env().items():
            monkeypatch.setenv(key, value)
        daemon = DaemonProcess(dagster_home, Path(__file__).resolve().parents[2] / "workspace.yaml")
        daemon.start()
        try:
            with open_workspace(instance) as process:
                # newest first, each after the last: re-planning first would delete the
                # partition of a unit it no longer needs, which the fix run names
                for parent in runs:
                    result = execute_dagster_graphql(process.create_request_context(), REEXECUTE,
                                                     {"parent": parent.run_id})
                    launched = result.data["launchPipelineReexecution"]
                    assert launched["__typename"] == "LaunchRunSuccess", launched
                    child = launched["run"]["runId"]
                    done = follow(instance, child, timeout_s=600)
                    assert done.success, (parent.job_name, done.messages)
                    again = instance.get_run_by_id(child)
                    assert again is not None and again.parent_run_id == parent.run_id
                    assert again.job_name == parent.job_name
        finally:
            daemon.stop()
