"""A multi-worker deployment on this machine, every service started here and ended by its PID:
Redis (the celery broker, from Debian's ``redis-server``, append-only so a restart keeps the
queue), ``git daemon`` serving the target repository's remote, the Dagster daemon on
``deploy/dagster.yaml`` (Dagster's storage on PostgreSQL), and N fleet celery workers
(``python -m fleet_pipelines.engine.worker``), each with its own ``FLEET_HOME`` and working
directory, sharing only PostgreSQL and the git remote. The coordinator (``fleet sweep``) runs in
the calling process with ``cluster.env``. Used by tests/distributed and benchmarks/bench_engine.py.

As root (with ``unshare``), each worker runs in a mount namespace of its own (``isolated``): the
deployment's directory is a tmpfs there, with only the worker's own directory (its
``FLEET_HOME``, ``DAGSTER_HOME``, log) bound back, so no worker can read another's state, the
coordinator's or the daemon's — as on separate machines. Its pid is the worker's own
(``unshare`` and ``sh`` exec it), so kill -9 kills the worker.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fleet_pipelines.engine import WORKSPACE, CodeServerProcess, DaemonProcess
from tests._reaper import Reaper, reap_with_owner
from tests.engine.conftest import (
    GitDaemon,
    free_port,
    pg_url,
    release_port,
    start_git_daemon,
    stop,
    wait_for_port,
)

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
REDIS = "/usr/bin/redis-server"
# in the worker's new mount namespace: its own directory ($1) bound aside (a tmpfs on /mnt), a
# tmpfs over the deployment's directory ($2), the worker's directory bound back, then the worker
_ISOLATE = ('set -e; mount -t tmpfs fleet-stage /mnt; mkdir /mnt/own; mount --bind "$1" /mnt/own; '
            'mount -t tmpfs fleet-ns "$2"; mkdir -p "$1"; mount --bind /mnt/own "$1"; '
            'umount /mnt/own; umount /mnt; shift 2; exec "$@"')
GIT_ENV = {"GIT_AUTHOR_NAME": "fleet worker", "GIT_AUTHOR_EMAIL": "worker@fleet.invalid",
           "GIT_COMMITTER_NAME": "fleet worker", "GIT_COMMITTER_EMAIL": "worker@fleet.invalid"}


@dataclass
class Redis:
    port: int
    workdir: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = (self.workdir / "redis.log").open("ab")
        self.proc = subprocess.Popen(
            [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.workdir),
             "--appendonly", "yes", "--appendfsync", "always", "--save", "",
             "--protected-mode", "no"], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        log.close()
        wait_for_port(self.port, self.proc, "redis-server")

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)
            self.proc = None


@dataclass
class Worker:
    name: str
    home: Path
    proc: subprocess.Popen[bytes]
    log: Path
    # kills its process group if this test process dies without stopping it (Ctrl-C)
    reaper: Reaper | None = None

    def kill(self) -> None:
        """kill -9 of the worker and everything it started (its sandboxes)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._stopped()

    def _stopped(self) -> None:
        if self.reaper is not None:
            self.reaper.cancel()
            self.reaper = None

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        else:
            self.proc.wait()
        self._stopped()


@dataclass
class Cluster:
    root: Path
    env: dict[str, str]
    redis: Redis
    git: GitDaemon
    code: CodeServerProcess
    daemon: DaemonProcess
    remote: str
    workers: dict[str, Worker] = field(default_factory=dict)
    sweeps: list[subprocess.Popen[str]] = field(default_factory=list)
    sweep_count: int = 0
    isolated: bool = field(
        default_factory=lambda: os.geteuid() == 0 and shutil.which("unshare") is not None)

    def worker_env(self, name: str, **extra: str) -> dict[str, str]:
        home = self.root / "workers" / name / "home"
        env = {**os.environ, **self.env, **GIT_ENV, "FLEET_HOME": str(home),
               "DAGSTER_HOME": str(self.root / "workers" / name / "dagster"), **extra}
        return env

    def start_worker(self, name: str, **extra: str) -> Worker:
        env = self.worker_env(name, **extra)
        cwd = self.root / "workers" / name
        Path(env["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)
        shutil.copy(DEPLOY / "dagster.yaml", Path(env["DAGSTER_HOME"]) / "dagster.yaml")
        log = cwd / "worker.log"
        command = [sys.executable, "-m", "fleet_pipelines.engine.worker", "-n", name,
                   "--loglevel", "INFO"]
        if self.isolated:
            command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", _ISOLATE,
                       "isolate", str(cwd), str(self.root), *command]
        with log.open("ab") as out:
            proc = subprocess.Popen(command, env=env, cwd=cwd,
                                    stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        worker = Worker(name, Path(env["FLEET_HOME"]), proc, log,
                        reap_with_owner(proc.pid, signal.SIGKILL, group=True))
        self.workers[name] = worker
        return worker

    def start_sweep(self) -> subprocess.Popen[str]:
        """``fleet sweep <remote>`` as the coordinator, in the background; its output in
        ``<root>/sweep-<n>.log`` (``sweep_log()``: the last one's). ``close()`` kills a sweep
        still running (a failed test's), so the next test's sweep is not refused as busy."""
        fleet = Path(sys.executable).with_name("fleet")
        self.sweeps = [p for p in self.sweeps if p.poll() is None]
        self.sweep_count += 1
        out = self.sweep_path().open("w")
        proc = subprocess.Popen(
            [str(fleet), "sweep", self.remote, "-c", self.env["FLEET_CAMPAIGNS"], "--sandbox",
             "bwrap", "--agents", "1", "--home", self.env["FLEET_HOME"]],
            env={**os.environ, **GIT_ENV, **self.env}, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, text=True)
        out.close()
        self.sweeps.append(proc)
        return proc

    def sweep_path(self) -> Path:
        return self.root / f"sweep-{self.sweep_count}.log"

    def sweep_log(self) -> str:
        return self.sweep_path().read_text()

    def end_sweeps(self) -> None:
        """Kill every sweep this cluster started that still runs (and reap it)."""
        for proc in self.sweeps:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self.sweeps = []

    def runs_summary(self) -> str:
        """One line per run on the instance (job, status, id, failure reason), newest first:
        for a failing test's message."""
        with self.instance() as instance:
            return "\n".join(f"{r.job_name} {r.status.value} {r.run_id} "
                             f"{r.tags.get('dagster/failure_reason', '')}"
                             for r in instance.get_runs(limit=40))

    def wait_ready(self, names: list[str], timeout_s: float = 180.0) -> None:
        """Every worker in ``names`` logs that it is ready to consume."""
        deadline = time.monotonic() + timeout_s
        for name in names:
            worker = self.workers[name]
            while b" ready." not in worker.log.read_bytes():
                if worker.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"worker {name} did not start "
                                         f"(exit {worker.proc.poll()}):\n"
                                         f"{worker.log.read_text()[-3000:]}")
                time.sleep(0.2)

    @contextlib.contextmanager
    def instance(self) -> Iterator[Any]:
        """The deployment's Dagster instance, opened here (its storage URL from ``env``)."""
        from dagster import DagsterInstance

        names = ("DAGSTER_POSTGRES_URL", "DAGSTER_HOME")  # (its compute logs: DAGSTER_HOME)
        saved = {name: os.environ.get(name) for name in names}
        os.environ.update({name: self.env[name] for name in names})
        try:
            with DagsterInstance.from_config(self.env["DAGSTER_HOME"]) as instance:
                yield instance
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    def wait_serving(self, timeout_s: float = 180.0) -> None:
        """The deployment's daemon beats on the instance (a sweep then starts none)."""
        from fleet_pipelines.engine import serving

        with self.instance() as instance:
            deadline = time.monotonic() + timeout_s
            while not serving(instance):
                if not self.daemon.alive or time.monotonic() > deadline:
                    raise AssertionError(f"the daemon does not serve the instance:\n"
                                         f"{self.daemon.log.read_text()[-3000:]}")
                time.sleep(0.5)

    def failures(self) -> list[str]:
        """Every step failure on the instance, with its causes (for a failing test's message)."""
        from dagster import DagsterEventType

        out = []
        with self.instance() as instance:
            for run in instance.get_runs(limit=40):
                for entry in instance.all_logs(run.run_id,
                                               of_type=DagsterEventType.STEP_FAILURE):
                    assert entry.dagster_event is not None
                    error = entry.dagster_event.step_failure_data.error
                    while error is not None:
                        out.append(f"{entry.step_key}: {error.to_string()}")
                        error = error.cause
        return out

    def statuses(self) -> list[str]:
        """Each run on the instance: id, job, status and Dagster's tags (a failing test's
        message)."""
        with self.instance() as instance:
            return [f"{r.run_id[:8]} {r.job_name} {r.status.value} "
                    f"{ {k: v for k, v in r.tags.items() if k.startswith('dagster/')} }"
                    for r in instance.get_runs(limit=40)]

    def close(self) -> None:
        self.end_sweeps()
        for worker in self.workers.values():
            worker.stop()
        self.daemon.stop()
        self.code.stop()
        release_port(self.code.port or 0)
        self.redis.stop()
        stop(self.git.proc)
        release_port(self.redis.port)
        release_port(self.git.port)


def deployment_env(dagster_home: Path, dagster_dsn: str, store_dsn: str, home: Path,
                   remote: str, campaign: str, broker: str, visibility_s: float, *,
                   workspace: Path, **extra: str) -> dict[str, str]:
    """The environment of every process of the deployment (the coordinator's; a worker's
    differs in ``FLEET_HOME`` and ``DAGSTER_HOME``): the same variables as
    deploy/docker-compose.yaml and deploy/k8s-*.yaml set (a test compares them).
    ``workspace``: the workspace file naming the deployment's code server."""
    return {"DAGSTER_HOME": str(dagster_home),
            "DAGSTER_POSTGRES_URL": pg_url(dagster_dsn, "postgresql+psycopg2"),
            "FLEET_DEPLOYMENT": "shared", "FLEET_STORE_URL": pg_url(store_dsn),
            "FLEET_HOME": str(home), "FLEET_WORKSPACE": str(workspace), "FLEET_REPO": remote,
            "FLEET_BASE_BRANCH": "main",
            "FLEET_CAMPAIGNS": campaign, "FLEET_SANDBOX": "bwrap", "FLEET_EXECUTOR": "celery",
            "FLEET_CELERY_BROKER": broker, "FLEET_CELERY_VISIBILITY_S": str(visibility_s),
            **extra}


def start_cluster(root: Path, target: Path, store_dsn: str, dagster_dsn: str,
                  workers: int = 3, campaign: str = "yaml-safe-load",
                  visibility_s: float = 3600, pool: int | None = None,
                  **extra: str) -> Cluster:
    """The deployment over a bare copy of ``target`` (a git repository with a ``main``) served
    by ``git daemon``: the coordinator and every worker have ``FLEET_REPO`` = its URL (each its
    own mirror under its own ``FLEET_HOME``); ``<root>/user`` is a clone to push changes from."""
    git = start_git_daemon(root / "served")
    git.bare_from(target, "target.git")
    remote = git.url("target.git")
    coordinator = root / "coordinator"
    subprocess.run(["git", "clone", "--quiet", remote, str(root / "user")], check=True)
    dagster_home = coordinator / "dagster"
    dagster_home.mkdir(parents=True)
    instance = yaml.safe_load((DEPLOY / "dagster.yaml").read_text())
    # batches holding the agent_sandbox pool at once: by default two per worker, as
    # docs/deploy.md says to set it (the next batch's run launches while a worker still runs
    # one, its step waits in the broker; a worker takes one task at a time, so the pool does not
    # put more sandboxes on a worker)
    instance["concurrency"]["pools"]["default_limit"] = pool or 2 * workers
    # and runs of one campaign at once no fewer (the sweep launches two batches per worker ahead
    # when its campaign's max_parallel_agents allows: _sweep.batch_window), beside a plan run
    runs = instance["concurrency"]["runs"]
    runs["tag_concurrency_limits"][0]["limit"] = max(4, pool or 2 * workers)
    runs["max_concurrent_runs"] = max(8, (pool or 2 * workers) + 2)
    (dagster_home / "dagster.yaml").write_text(yaml.safe_dump(instance, sort_keys=False))
    redis = Redis(free_port(), root / "redis")
    redis.start()
    # the code server (deploy/docker-compose.yaml's `code`: the daemon, the webserver and the
    # sweeps load the code location from it, FLEET_WORKSPACE naming it), and the daemon (and
    # the run workers it launches: index, plan), each on a FLEET_HOME of its own, as in
    # deploy/docker-compose.yaml: nothing the coordinator writes under its home reaches them
    code = CodeServerProcess(dagster_home, WORKSPACE, state=root / "code", port=free_port())
    env = deployment_env(dagster_home, dagster_dsn, store_dsn, coordinator / "home", remote,
                         campaign, redis.url, visibility_s, workspace=code.workspace_file,
                         **extra)
    code.env.update({**GIT_ENV, **env, "FLEET_HOME": str(root / "code" / "home")})
    (root / "daemon" / "home").mkdir(parents=True)  # its own directory from the start
    daemon = DaemonProcess(dagster_home, code.workspace_file,
                           {**GIT_ENV, **env, "FLEET_HOME": str(root / "daemon" / "home")})
    cluster = Cluster(root, env, redis, git, code, daemon, remote)
    try:
        code.start()
        daemon.start()
        for i in range(1, workers + 1):
            cluster.start_worker(f"w{i}")
        cluster.wait_ready(list(cluster.workers))
        cluster.wait_serving()
    except BaseException:
        cluster.close()
        raise
    return cluster
