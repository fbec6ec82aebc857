"""The embedded default's run launcher (fleet_pipelines/engine/run_launcher.py): each run worker
is forked from a warm fork server, not spawned as a fresh interpreter by the code server. A
submitted sweep's runs are all forked; a run worker killed with -9 mid-run is reported at once
(its exit code in an engine event, the run failed) and the instance's retry finishes the sweep;
a run terminated through the launcher ends canceled with its worker gone; the run monitoring's
health check tells a live worker from a gone one."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleet_pipelines.engine import run_queue_config
from fleet_pipelines.engine.run_launcher import (
    RUN_WORKER_TAG,
    ForkingRunLauncher,
    _boot_id,
    _start_ticks,
)
from fleet_pipelines.storage import instance_config
from tests.conftest import commit_files
from tests.engine.test_run_retries import _wait
from tests.engine.test_submitted_sweep import CONF_FILES


def _run_with_worker(tag: str | None) -> Any:
    from dagster import DagsterRun

    return DagsterRun(job_name="index_code_job", run_id=str(uuid.uuid4()),
                      tags={RUN_WORKER_TAG: tag} if tag else {})


def _run_of(executable: str) -> Any:
    """A run whose code origin is the definitions module loaded by ``executable``."""
    from dagster import DagsterRun
    from dagster._core.code_pointer import ModuleCodePointer
    from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin

    pointer = ModuleCodePointer("fleet_pipelines.definitions", "defs")
    origin = JobPythonOrigin("index_code_job", RepositoryPythonOrigin(
        executable_path=executable, code_pointer=pointer, container_image=None,
        entry_point=None, container_context=None))
    return DagsterRun(job_name="index_code_job", run_id=str(uuid.uuid4()),
                      job_code_origin=origin)


def test_a_run_of_this_interpreter_under_another_name_is_forked() -> None:
    """The code location's ``executable_path`` names this interpreter as ``python3`` where the
    daemon runs as ``python`` (a venv's console scripts carry either): one interpreter, so the
    run is forked; a run of another interpreter goes to the code server."""
    launcher = ForkingRunLauncher()
    here = Path(sys.executable)
    same = [here.with_name(n) for n in ("python", "python3")
            if here.with_name(n).exists()
            and here.with_name(n).resolve() == here.resolve()]
    assert same, here
    for name in same:
        assert launcher.forks(_run_of(str(name))) is None, name
    why = launcher.forks(_run_of("/usr/bin/python3"))
    assert why is not None and "runs on /usr/bin/python3" in why


def test_the_health_check_tells_a_live_worker_from_a_gone_one() -> None:
    from assets._dagster_private import WorkerStatus

    launcher = ForkingRunLauncher()
    me = f"{_boot_id()}:{os.getpid()}:{_start_ticks(os.getpid())}"
    assert launcher.check_run_worker_health(_run_with_worker(me)).status == WorkerStatus.RUNNING
    ended = subprocess.Popen(["true"])
    ended.wait()
    gone = launcher.check_run_worker_health(_run_with_worker(f"{_boot_id()}:{ended.pid}:1"))
    assert gone.status == WorkerStatus.FAILED and f"pid {ended.pid}" in str(gone.msg)
    # the same pid, started at another time: a reused pid is not the worker
    reused = f"{_boot_id()}:{os.getpid()}:{int(_start_ticks(os.getpid()) or 0) + 1}"
    assert launcher.check_run_worker_health(_run_with_worker(reused)).status == (
        WorkerStatus.FAILED)
    # another boot (or machine): not judged here; a run the code server started: its own
    other = launcher.check_run_worker_health(_run_with_worker(f"other-boot:{os.getpid()}:1"))
    assert other.status == WorkerStatus.RUNNING and "not checked here" in str(other.msg)
    assert launcher.check_run_worker_health(_run_with_worker(None)).status == (
        WorkerStatus.RUNNING)


def _instance_home(tmp_path: Path) -> Path:
    home = tmp_path / "dagster"
    home.mkdir()
    config = {**instance_config(home), **run_queue_config(start_timeout_s=60, monitor_poll_s=2)}
    (home / "dagster.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return home


@contextlib.contextmanager
def _sweeping(git_repo: Path, tmp_path: Path
              ) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    """A ``fleet sweep`` of a one-finding repository on a fresh embedded instance, in the
    background: the sweep, its log and the instance's home; killed if still running after."""
    repo = commit_files(git_repo, CONF_FILES, "conf")
    home = _instance_home(tmp_path)
    log = tmp_path / "sweep.log"
    fleet = Path(sys.executable).with_name("fleet")
    with log.open("wb") as out:
        sweep = subprocess.Popen(
            [str(fleet), "sweep", str(repo), "-c", "yaml-safe-load", "--sandbox", "bwrap",
             "--home", str(tmp_path / "fleet")],
            env={**os.environ, "DAGSTER_HOME": str(home), "COLUMNS": "200"},
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        yield sweep, log, home
    finally:
        if sweep.poll() is None:
            sweep.kill()
        sweep.wait()  # reaped here: not left to warn in whichever test collects it


def _forked(instance: Any, job_prefix: str) -> Any:
    """The first STARTED run of a job named ``job_prefix...`` whose worker was forked."""
    from dagster import DagsterRunStatus, RunsFilter

    for run in instance.get_runs(RunsFilter(statuses=[DagsterRunStatus.STARTED])):
        if run.job_name.startswith(job_prefix) and RUN_WORKER_TAG in run.tags:
            return run
    return None


def _submitted(instance: Any, job_prefix: str) -> Any:
    """The run of the one-campaign sweep's job named ``job_prefix...``, in any status (one
    query for that job's newest run: polled every 10 ms, it must see the run before it
    starts)."""
    from dagster import RunsFilter

    runs = instance.get_runs(RunsFilter(job_name=f"{job_prefix}yaml_safe_load_job"), limit=1)
    return runs[0] if runs else None


@contextlib.contextmanager
def _store_held(db: Path) -> Iterator[None]:
    """The fleet store's write lock, held: every writer waits (its busy timeout is 60 s)."""
    conn = sqlite3.connect(db, isolation_level=None, timeout=60)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def _engine_messages(instance: Any, run_id: str) -> list[str]:
    from dagster import DagsterEventType

    return [str(e.message) for e in instance.all_logs(run_id,
                                                      of_type=DagsterEventType.ENGINE_EVENT)]


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a_killed_run_worker_is_reported_at_once_and_its_retry_ends_the_sweep(
        git_repo: Path, tmp_path: Path) -> None:
    from dagster import DagsterInstance, DagsterRunStatus

    with _sweeping(git_repo, tmp_path) as (sweep, log, home), \
            DagsterInstance.from_config(str(home)) as instance:
        # the plan run is held at its first write to the fleet store (a plan takes ~1 s, too
        # short to catch by polling on a loaded machine): the store's write lock is taken the
        # moment the sweep has submitted it, and let go once its worker is killed
        _wait("a submitted plan run", lambda: _submitted(instance, "plan_"), sweep, log,
              poll_s=0.01)
        with _store_held(tmp_path / "fleet" / "fleet.db"):
            run = _wait("a forked plan run", lambda: _forked(instance, "plan_"), sweep, log,
                        poll_s=0.01)
            pid = int(run.tags[RUN_WORKER_TAG].split(":")[1])
            os.kill(pid, signal.SIGKILL)
        assert sweep.wait(900) == 0, log.read_text()

        killed = instance.get_run_by_id(run.run_id)
        assert killed is not None and killed.status == DagsterRunStatus.FAILURE
        assert any(f"(pid {pid}) was terminated by signal 9" in m
                   for m in _engine_messages(instance, run.run_id)), (
            _engine_messages(instance, run.run_id))
        retry = instance.get_run_by_id(killed.tags["dagster/auto_retry_run_id"])
        assert retry is not None and retry.status == DagsterRunStatus.SUCCESS
        every = instance.get_runs()
        assert every and all(RUN_WORKER_TAG in r.tags for r in every), [
            (r.job_name, r.tags) for r in every]  # all forked, none by the code server
        assert all("dagster/grpc_info" not in r.tags for r in every)
        assert all(any("forked from the warm fork server" in m
                       for m in _engine_messages(instance, r.run_id)) for r in every)
        assert "Traceback" not in log.read_text()


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a_run_terminated_through_the_launcher_ends_canceled_with_its_worker_gone(
        git_repo: Path, tmp_path: Path) -> None:
    from dagster import DagsterInstance, DagsterRunStatus

    with _sweeping(git_repo, tmp_path) as (sweep, log, home), \
            DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance.run_launcher, ForkingRunLauncher)
        # held at its first write to the fleet store, as above: it cannot end before the signal
        _wait("a submitted fix run", lambda: _submitted(instance, "fix_"), sweep, log,
              poll_s=0.01)
        with _store_held(tmp_path / "fleet" / "fleet.db"):
            run = _wait("a forked fix run", lambda: _forked(instance, "fix_"), sweep, log,
                        poll_s=0.01)
            _boot, pid, start = run.tags[RUN_WORKER_TAG].split(":")
            terminated = instance.run_launcher.terminate(run.run_id)
        now = instance.get_run_by_id(run.run_id)
        assert terminated, (now.status if now else None, start, _start_ticks(int(pid)),
                            _engine_messages(instance, run.run_id), log.read_text()[-3000:])
        sweep.wait(900)
        ended = instance.get_run_by_id(run.run_id)
        assert ended is not None and ended.status == DagsterRunStatus.CANCELED, (
            ended.status if ended else None, log.read_text()[-3000:])
        deadline = time.monotonic() + 30
        while _start_ticks(int(pid)) == start and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _start_ticks(int(pid)) != start  # the worker is gone
        assert "Traceback" not in log.read_text()
