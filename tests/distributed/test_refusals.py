"""A fleet worker that must not take work says why in one line and exits 3 before it consumes
anything: no sandbox backend (never unsandboxed), the broker down, a database down. A sweep
whose deployment's broker is down is refused before it submits a batch, in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.distributed._cluster import Redis
from tests.engine.conftest import free_port

pytestmark = [pytest.mark.slow]


def start_worker(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {**os.environ, "FLEET_HOME": str(tmp_path / "home"), "FLEET_SANDBOX": "bwrap",
            "FLEET_CELERY_BROKER": f"redis://127.0.0.1:{free_port()}/0", **env}
    return subprocess.run([sys.executable, "-m", "fleet_pipelines.engine.worker", "-n", "w9"],
                          env=base, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          check=False)


def only_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 3 and len(lines) == 1, done.stderr
    assert lines[0].startswith("fleet worker w9 refuses work: ")
    return lines[0]


def test_a_worker_without_a_sandbox_backend_refuses_work(tmp_path: Path) -> None:
    bare = tmp_path / "bin"  # git and nothing else: no bwrap, runsc or qemu
    bare.mkdir()
    (bare / "git").symlink_to("/usr/bin/git")
    line = only_line(start_worker(tmp_path, FLEET_SANDBOX="auto", PATH=str(bare)))
    assert "no sandbox backend works here" in line
    line = only_line(start_worker(tmp_path, FLEET_SANDBOX="local"))
    assert "without isolation" in line


@pytest.mark.sandbox
def test_a_worker_names_the_broker_or_database_that_is_down(tmp_path: Path) -> None:
    port = free_port()
    line = only_line(start_worker(tmp_path, FLEET_CELERY_BROKER=f"redis://127.0.0.1:{port}/0"))
    assert f"the celery broker redis://127.0.0.1:{port}/0 is down" in line
    redis = Redis(free_port(), tmp_path / "redis")
    redis.start()
    try:
        dead = free_port()
        line = only_line(start_worker(
            tmp_path, FLEET_CELERY_BROKER=redis.url,
            FLEET_STORE_URL=f"postgresql://fleet:secret@127.0.0.1:{dead}/fleet"))
        assert f"the database FLEET_STORE_URL=postgresql://fleet:***@127.0.0.1:{dead}/fleet " \
               "is down" in line and "secret" not in line
    finally:
        redis.stop()


def test_a_sweep_is_refused_when_its_broker_is_down(monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster import DagsterInstance

    from fleet_pipelines.engine import Engine, SubmitFailed

    port = free_port()
    monkeypatch.setenv("FLEET_EXECUTOR", "celery")
    monkeypatch.setenv("FLEET_CELERY_BROKER", f"redis://127.0.0.1:{port}/0")
    # a restarting broker is waited for (30 s; tests/engine/test_broker_wait.py): 2 s here
    monkeypatch.setattr("fleet_pipelines.engine._session.BROKER_WAIT_S", 2.0)
    with DagsterInstance.ephemeral() as instance:
        engine = Engine(instance, print, {})
        with pytest.raises(SubmitFailed) as raised:
            engine.start("fix_yaml_safe_load_job")
    message = str(raised.value)
    assert message.startswith("fix_yaml_safe_load_job not submitted: the celery broker "
                              f"redis://127.0.0.1:{port}/0 is down") and "\n" not in message
    assert engine.runs == []  # nothing was submitted
