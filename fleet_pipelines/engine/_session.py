"""The engine of one ``fleet sweep`` / ``fleet demo``: every run it needs is submitted to the
instance and followed to its end (``engine.current()`` is what ``_sweep._execute`` uses).

The code location and the runs load ``fleet_pipelines.definitions`` from the environment, so the
sweep's settings go into the environment of the code server and of a daemon it starts.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dagster import AssetKey, DagsterInstance, DagsterRun, DagsterRunStatus

from fleet_pipelines.engine._config import execution_config
from fleet_pipelines.engine._daemon import SharedDaemon, needs_daemon, serving
from fleet_pipelines.engine._submit import (
    MISSED_S,
    Say,
    SubmitFailed,
    SubmittedRun,
    follow,
    open_workspace,
    submit,
    workspace_file,
)

__all__ = ["BROKER_WAIT_S", "Engine", "current", "submitting"]

# how long a run for the deployment's workers waits for a broker that refuses before the sweep
# stops on it: a restarting Redis answers again within seconds
BROKER_WAIT_S = 30.0

_CURRENT: contextvars.ContextVar[Engine | None] = contextvars.ContextVar("fleet_engine",
                                                                         default=None)


def current() -> Engine | None:
    """The engine of the sweep in progress in this context, if any (tests that call
    ``sweep()`` directly have none: their runs execute in process)."""
    return _CURRENT.get()


class Engine:
    """Submits runs to ``instance`` through the workspace's code location and follows them; it
    starts a daemon on the instance when its runs would wait for one that does not serve it."""

    def __init__(self, instance: DagsterInstance, say: Say, env: Mapping[str, str],
                 workspace: Path | None = None) -> None:
        self.instance = instance
        self._process: Any = None
        self.say = say
        self.env = dict(env)
        self.workspace = workspace_file(workspace)  # a missing file stops it here
        self.daemon: SharedDaemon | None = None
        self._announced = False
        self.runs: list[str] = []
        self._workers: int | None = None
        self.missed_s = MISSED_S  # a retry the daemon has not made by then, this engine makes

    @property
    def process(self) -> Any:
        """The workspace's process context, opened on first use (its code server takes
        seconds: a sweep refused before its first run never starts one): the code server of
        the daemon fleet started here when it loads the location with this engine's settings
        (one server for the daemon and every such sweep), else one of its own."""
        if self._process is None:
            shared = self.daemon.workspace_for(self.env) if self.daemon is not None else None
            self._process = open_workspace(self.instance, shared or self.workspace)
        return self._process

    def ensure_daemon(self, status: DagsterRunStatus | None = None) -> None:
        """Make sure a daemon serves this instance while a run waits for one — queued (to be
        launched), starting (a launch the last daemon did not finish fails after the start
        timeout, then is retried) or failed and to be retried: a daemon that serves it already
        (a deployment's), else the one fleet processes share here (started if none runs,
        restarted if it exited)."""
        waiting = (None, DagsterRunStatus.QUEUED, DagsterRunStatus.STARTING)
        if status not in waiting or not needs_daemon(self.instance):
            return
        home = Path(self.instance.root_directory)
        if self.daemon is None:
            shared = SharedDaemon(home, self.workspace, self.env)
            if not shared.alive and serving(self.instance):
                if not self._announced:
                    self._announced = True
                    self.say(f"the Dagster daemon serving {home} launches this sweep's runs")
                return
            self.daemon = shared
        elif self.daemon.alive:
            return
        again = self.daemon.joined
        pid, started = self.daemon.join()
        log = self.daemon.process.log
        if not started:
            self.say(f"using the Dagster daemon another fleet process started on {home} "
                     f"(pid {pid}, log {log})")
        elif again:
            self.say(f"the Dagster daemon of {home} exited: restarted it (pid {pid})")
        else:
            self.say(f"no Dagster daemon serves {home}: started one (pid {pid}, log {log}); "
                     "it stops when the last fleet process using it ends")

    def distributed(self, job: str) -> bool:
        """Runs of ``job`` execute on the deployment's workers (``FLEET_EXECUTOR=celery``)."""
        return "celery" in execution_config(job)["execution"]["config"]

    def workers(self, job: str) -> int | None:
        """The deployment's celery workers that answer a ping on the broker now (asked once
        per engine), for a job whose runs execute on them; None otherwise or when none answer
        (the caller then keeps its own limit)."""
        if not self.distributed(job):
            return None
        if self._workers is None:
            from celery import Celery

            app = Celery(broker=os.environ.get("FLEET_CELERY_BROKER", ""))
            try:
                self._workers = len(app.control.ping(timeout=1.0))
            except Exception:  # a broker down is refused in start(), in one line
                self._workers = 0
            finally:
                app.close()
        return self._workers or None

    def run(self, job: str, tags: Mapping[str, str] | None = None,
            selection: Sequence[AssetKey] | None = None,
            run_config: Mapping[str, Any] | None = None) -> SubmittedRun:
        """Submit a run of ``job`` and follow it to its end."""
        return self.wait(self.start(job, tags, selection, run_config))

    def start(self, job: str, tags: Mapping[str, str] | None = None,
              selection: Sequence[AssetKey] | None = None,
              run_config: Mapping[str, Any] | None = None) -> str:
        """Submit a run of ``job``; its run id (several runs submitted before the first is
        followed run side by side, as far as the instance's limits and workers allow). A run
        for the deployment's workers whose broker is down is refused here, in one line."""
        if self.distributed(job):
            from fleet_pipelines.engine._checks import broker_down

            # a broker restarting mid-sweep is waited for (BROKER_WAIT_S), not a failed sweep
            problem = broker_down(os.environ.get("FLEET_CELERY_BROKER", ""),
                                  wait_s=BROKER_WAIT_S)
            if problem is not None:
                raise SubmitFailed(f"{job} not submitted: {problem}")
        self.ensure_daemon()
        run_id = submit(self.process, job, tags, selection, run_config)
        self.runs.append(run_id)
        return run_id

    def wait(self, run_id: str) -> SubmittedRun:
        """Follow the submitted run ``run_id`` to its end (into the instance's retries of it,
        which count among this engine's runs)."""
        done = follow(self.instance, run_id, self.say, on_wait=self.ensure_daemon,
                      retry=self.retry, missed_s=self.missed_s)
        self.runs.extend(r for r in done.attempts if r not in self.runs)
        return done

    def retry(self, run: DagsterRun) -> None:
        """Retry the failed ``run`` as the daemon does (a retry it missed): a re-execution
        from failure submitted to the run queue, tagged as the daemon tags it."""
        from assets._dagster_private import retry_failed_run

        retry_failed_run(run, self.process)

    def close(self) -> None:
        if self.daemon is not None:
            self.daemon.leave()
            self.daemon = None
        if self._process is not None:
            self._process.__exit__(None, None, None)
            self._process = None


@contextmanager
def submitting(instance: DagsterInstance, env: Mapping[str, str], say: Say,
               workspace: Path | None = None) -> Iterator[Engine]:
    """For the block, ``current()`` is an :class:`Engine` on ``instance`` whose code location
    (and daemon, if it starts one) load the definitions with ``env`` (``FleetSettings.env()``)."""
    env = {**env, "DAGSTER_HOME": str(instance.root_directory)}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the code server process inherits it
    try:
        engine = Engine(instance, say, env, workspace)
        token = _CURRENT.set(engine)
        try:
            yield engine
        finally:
            _CURRENT.reset(token)
            engine.close()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
