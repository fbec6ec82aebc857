"""What stops a ``fleet sweep`` after its preflight is said in one line on stderr, with an exit
code that says which kind (``_pipeline_run.swept``), never a traceback: the kill switch, a fleet
store whose PostgreSQL is down (named, its password hidden), a Dagster instance whose storage's
PostgreSQL is down (each of dagster-postgres' retries one line while it waits, then the instance
named), a ``FLEET_WORKSPACE`` that names no file (before any run; no daemon started). Each is
the real command in a process of its own, as a user runs it; the databases are loopback ports
that nothing listens on."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from dagster import DagsterInstance

from fleet.store import open_store
from tests.conftest import ROOT


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _sweep(repo: Path, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("FLEET_", "DAGSTER_"))}
    environ.update({"FLEET_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"), **env})
    return subprocess.run([sys.executable, "-m", "fleet_pipelines.cli", "sweep", str(repo),
                           "-c", "yaml-safe-load", "--sandbox", "bwrap"],
                          env=environ, cwd=repo.parent, capture_output=True, text=True,
                          timeout=300, check=False)


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr[-3000:]
    assert done.stderr.rstrip().splitlines()[-1] == errors[0]
    return errors[0]


def test_the_kill_switch_stops_the_sweep_in_one_line(
        tmp_path: Path, git_repo: Path, bwrap: object) -> None:
    home = tmp_path / "fleet"
    home.mkdir()
    with open_store(f"sqlite:///{home.resolve() / 'fleet.db'}") as store:
        store.controls.engage("incident 7")
    done = _sweep(git_repo, home)
    assert done.returncode == 2, done.stderr[-3000:]
    assert _one_error_line(done) == "error: kill switch engaged: `fleet stop --off` to resume"
    assert done.stderr.count("\n") == 1


def test_a_fleet_store_that_is_down_is_named_in_one_line(
        tmp_path: Path, git_repo: Path, bwrap: object) -> None:
    port = _closed_port()
    done = _sweep(git_repo, tmp_path / "fleet", FLEET_DEPLOYMENT="shared",
                  FLEET_STORE_URL=f"postgresql://fleet:hunter2@127.0.0.1:{port}/fleet")
    assert done.returncode == 2, done.stderr[-3000:]
    line = _one_error_line(done)
    assert line.startswith(f"error: the fleet store postgresql://fleet:***@127.0.0.1:{port}/fleet "
                           "cannot be reached: "), line
    assert "Connection refused" in line
    assert "hunter2" not in done.stderr + done.stdout


def test_a_dagster_storage_that_is_down_is_named_in_one_line(
        tmp_path: Path, git_repo: Path, bwrap: object) -> None:
    home = tmp_path / "fleet"
    (home / "dagster").mkdir(parents=True)
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster" / "dagster.yaml")
    port = _closed_port()
    done = _sweep(git_repo, home,
                  DAGSTER_POSTGRES_URL=f"postgresql://dagster:hunter2@127.0.0.1:{port}/dagster")
    assert done.returncode == 2, done.stderr[-3000:]
    line = _one_error_line(done)
    assert line.startswith(f"error: the Dagster instance {home / 'dagster'} cannot open its "
                           f"storage ({home / 'dagster' / 'dagster.yaml'}): "), line
    assert "Connection refused" in line
    waits = [ln for ln in done.stderr.splitlines() if ln != line]
    assert waits, done.stderr  # dagster-postgres retried before it gave up: said as it waited
    assert all("the Dagster storage's database refused a connection, retrying: " in ln
               and "Connection refused" in ln for ln in waits), done.stderr[-3000:]
    assert "hunter2" not in done.stderr + done.stdout


def test_a_workspace_file_that_is_missing_is_named_before_any_run(
        tmp_path: Path, git_repo: Path, bwrap: object) -> None:
    home = tmp_path / "fleet"
    missing = tmp_path / "deploy" / "workspace.yaml"
    done = _sweep(git_repo, home, FLEET_WORKSPACE=str(missing))
    assert done.returncode != 0, done.stderr[-3000:]
    line = _one_error_line(done)
    assert line == f"error: FLEET_WORKSPACE={missing}: no such workspace file", line
    assert not (home / "dagster" / "fleet-daemon.pid").exists()  # no daemon was started
    if (home / "dagster" / "dagster.yaml").exists():
        with DagsterInstance.from_config(str(home / "dagster")) as instance:
            assert instance.get_runs() == []  # and no run was created
