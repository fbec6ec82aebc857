"""The shared deployment's instance (``deploy/dagster.yaml``: Dagster's storage on PostgreSQL,
the queued run coordinator) with a daemon that already serves it and the deployment's code
server (``FLEET_WORKSPACE``, as deploy/docker-compose.yaml's ``code``): ``fleet sweep`` submits
its runs there through that code server, starts no daemon or code server of its own, and the
fleet store is PostgreSQL too."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
import yaml

from fleet_pipelines.cli import main
from fleet_pipelines.engine import (
    WORKSPACE,
    CodeServerProcess,
    DaemonProcess,
    run_queue_config,
    serving,
)
from tests.conftest import commit_files
from tests.engine.conftest import free_port, pg_url, release_port
from tests.engine.test_submitted_sweep import CONF_FILES

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_deploy_instance_has_the_embedded_run_queue() -> None:
    config = yaml.safe_load((DEPLOY / "dagster.yaml").read_text())
    queue = run_queue_config()
    assert config["run_coordinator"] == queue["run_coordinator"]
    assert config["concurrency"] == queue["concurrency"]
    assert config["code_servers"] == queue["code_servers"]  # no code server left unwaited
    assert config["run_monitoring"] == queue["run_monitoring"]  # a lost launch fails, then
    assert config["run_retries"] == queue["run_retries"]  # is retried


@pytest.mark.postgres
@pytest.mark.sandbox
@pytest.mark.slow
def test_sweep_on_the_shared_instance_uses_its_daemon(
        git_repo: Path, tmp_path: Path, pg_dsn: str, second_pg_dsn: str,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster import DagsterInstance, DagsterRunStatus

    repo = commit_files(git_repo, CONF_FILES, "conf")
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    shutil.copy(DEPLOY / "dagster.yaml", dagster_home / "dagster.yaml")
    home = tmp_path / "fleet"
    env = {"DAGSTER_HOME": str(dagster_home),
           "DAGSTER_POSTGRES_URL": pg_url(second_pg_dsn, "postgresql+psycopg2"),
           "FLEET_DEPLOYMENT": "shared", "FLEET_STORE_URL": pg_url(pg_dsn),
           "FLEET_HOME": str(home), "FLEET_REPO": str(repo), "FLEET_CAMPAIGNS": "yaml-safe-load",
           "FLEET_SANDBOX": "bwrap"}
    code = CodeServerProcess(dagster_home, WORKSPACE, env, state=tmp_path / "code",
                             port=free_port())
    env["FLEET_WORKSPACE"] = str(code.workspace_file)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    daemon = DaemonProcess(dagster_home, code.workspace_file, env)
    try:
        code.start()
        daemon.start()
        with DagsterInstance.get() as instance:
            deadline = time.monotonic() + 180
            while not serving(instance):  # the deployment's daemon beats before the sweep
                assert daemon.alive and time.monotonic() < deadline, daemon.log.read_text()
                time.sleep(0.5)
        assert main(["sweep", str(repo), "-c", "yaml-safe-load", "--sandbox", "bwrap",
                     "--home", str(home)]) == 0
        captured = capsys.readouterr()
        assert "verified, integrated" in captured.out
        assert "started one" not in captured.err and "the Dagster daemon serving" in captured.err
        assert daemon.alive  # the sweep left the deployment's daemon alone
        assert code.pid() is not None  # and its code server
        assert not (dagster_home / "fleet-code-server.pid").exists()  # and started none
        with DagsterInstance.get() as instance:
            assert type(instance.run_storage).__name__ == "PostgresRunStorage"
            runs = instance.get_runs()
            assert len(runs) >= 4
            assert all(r.status == DagsterRunStatus.SUCCESS and r.remote_job_origin is not None
                       for r in runs)
    finally:
        daemon.stop()
        code.stop()
        release_port(code.port or 0)
    assert not os.path.exists(home / "fleet.db")  # the fleet store was PostgreSQL
