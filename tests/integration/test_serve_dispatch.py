"""``fleet serve`` as a real process launches Dagster runs: ``POST /v1/jobs/dispatch`` of a
campaign becomes a run of its plan job on the instance at ``$DAGSTER_HOME`` (limited to the
dispatched files), visible through ``GET /v1/jobs/{id}``; with ``--no-launch`` it only queues."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from fleet.store import open_store
from fleet.unit import load_units

FLEET = [sys.executable, "-m", "fleet_pipelines.cli"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def env(tmp_path: Path, acme_repo: Path) -> dict[str, str]:
    (tmp_path / "dagster").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEET_", "DAGSTER_"))}
    return {**env, "FLEET_HOME": str(tmp_path / "fleet"), "FLEET_REPO": str(acme_repo),
            "FLEET_CAMPAIGNS": "yaml-safe-load", "DAGSTER_HOME": str(tmp_path / "dagster")}


@contextmanager
def _serve(env: dict[str, str], *extra: str) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([*FLEET, "serve", "--port", str(port), *extra], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{url}/v1/leases", timeout=1)
                break
            except requests.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    detail = proc.stderr.read() if proc.stderr else ""
                    raise AssertionError(f"fleet serve did not start: {detail}") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(15)
        if proc.stderr is not None:
            proc.stderr.close()


def _token(env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run([*FLEET, "token", "create", "--scope", "jobs", "--name", "ci"], env=env,
                         capture_output=True, text=True, check=True)
    return {"Authorization": f"Bearer {out.stdout.strip()}"}


def test_fleet_serve_dispatch_launches_a_dagster_run(env: dict[str, str], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster import DagsterInstance, DagsterRunStatus

    from fleet_pipelines.jobs import JOB_ID_TAG

    # the store of the deployment: the token CLI defaults to $FLEET_STORE_URL as well
    env["FLEET_STORE_URL"] = f"sqlite:///{tmp_path / 'fleet' / 'fleet.db'}"
    headers = _token(env)
    with _serve(env) as url:
        response = requests.post(f"{url}/v1/jobs/dispatch", headers=headers, timeout=30, json={
            "task": "yaml-safe-load", "target_files": ["billing/rates.py"]})
        assert response.status_code == 200, response.text
        job_id = response.json()["job_id"]
        status = requests.get(f"{url}/v1/jobs/{job_id}", headers=headers, timeout=10).json()
        assert status["run_id"], status
        monkeypatch.setenv("DAGSTER_HOME", env["DAGSTER_HOME"])
        with DagsterInstance.get() as instance:
            # submitted: the daemon fleet serve starts dequeues it, a run worker process runs it
            deadline = time.monotonic() + 300
            run = instance.get_run_by_id(status["run_id"])
            while run is None or not run.is_finished:
                assert time.monotonic() < deadline, f"run {status['run_id']} did not finish"
                time.sleep(0.25)
                run = instance.get_run_by_id(status["run_id"])
            assert run.status == DagsterRunStatus.SUCCESS
            assert run.job_name == "plan_yaml_safe_load_job" and run.tags[JOB_ID_TAG] == job_id
        with open_store(env["FLEET_STORE_URL"]) as store:
            units = load_units(store.ledger, "yaml-safe-load")
        assert units and {p for u in units for p in u.paths} == {"billing/rates.py"}


def test_fleet_serve_no_launch_only_queues(env: dict[str, str], tmp_path: Path) -> None:
    env["FLEET_STORE_URL"] = f"sqlite:///{tmp_path / 'queue.db'}"
    headers = _token(env)
    with _serve(env, "--no-launch") as url:
        response = requests.post(f"{url}/v1/jobs/dispatch", headers=headers, timeout=30, json={
            "task": "yaml-safe-load", "target_files": ["billing/rates.py"]})
        assert response.status_code == 200, response.text
        status = requests.get(f"{url}/v1/jobs/{response.json()['job_id']}", headers=headers,
                              timeout=10).json()
        assert status["run_id"] is None and status["status"] == "queued"
        assert not any((tmp_path / "dagster").iterdir())  # no instance was touched
