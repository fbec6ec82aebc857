"""A run launcher that forks each run worker from a warm process.

Dagster's default launcher asks the code server to start a run; the server *spawns* a fresh
interpreter for it, which imports Dagster and the code location again before the run does
anything: ~2 CPU-s and ~2 s of latency per run on this project's 2-core machine, more than a
small index or plan run itself costs. :class:`ForkingRunLauncher` starts the run worker as a
child of a ``multiprocessing`` fork server that imported Dagster and ``fleet_pipelines`` once
(its ``preload``); the child executes the run exactly as ``dagster api execute_run`` does (from
the run's code origin, with Dagster's cancellation thread), so a run, its events, its retries
and its re-execution from the UI are the same as with the default launcher.

- *Where it forks.* Only a run whose code origin names this interpreter (the code location's
  ``executable_path`` is the daemon's ``sys.executable``, or another name of that file in its
  directory: a venv's ``python`` and ``python3``): another interpreter, a container
  image or no origin goes to the default launcher (the code server), and the run's engine
  events say which. The fork server is started on the first launch, single-threaded, from the
  launching process's environment (the daemon's, which also started the code server); its
  children read the code location's modules as they were when it started, so reloading
  changed code means restarting the daemon (as it does for the daemon's own sensors).
- *A dead run worker.* A watcher thread reports a run whose worker exited before the run
  finished as the code server does (an engine event with the exit code, then the run failed:
  the instance's ``run_retries`` retry it). After a daemon restart the run monitoring asks
  :meth:`check_run_worker_health`, which finds the worker by the pid, boot id and start time
  recorded in the run's ``fleet/run_worker`` tag.
- *Terminate* (the UI's, or ``instance.run_launcher.terminate``): the run is marked canceling
  and its worker gets SIGINT, the interrupt Dagster's own termination sends; Dagster ends the
  run as canceled.

Configured in ``dagster.yaml`` (the embedded default's is written by
``fleet_pipelines.engine._config.run_queue_config``)::

    run_launcher:
      module: fleet_pipelines.engine.run_launcher
      class: ForkingRunLauncher
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from dagster import (
    Array,
    DagsterInstance,
    DagsterRun,
    DefaultRunLauncher,
    Field,
    deserialize_value,
    serialize_value,
)

from assets._dagster_private import (
    CheckRunHealthResult,
    ConfigurableClassData,
    InstanceRef,
    WorkerStatus,
    capture_interrupts,
    execute_run_body,
    get_run_crash_explanation,
)

__all__ = ["PRELOAD", "RUN_WORKER_TAG", "ForkingRunLauncher", "run_worker_of"]

RUN_WORKER_TAG = "fleet/run_worker"  # "<boot id>:<pid>:<start time in clock ticks>"
# What a run worker imports before its run: Dagster, the code location and what its jobs use
# (_preload: the steps' lazy imports and alembic's migration scripts, loaded once), all with the
# cyclic collector off (_collector_off, first) and then frozen (fleet_pipelines._startup).
PRELOAD = ("fleet_pipelines._collector_off", "dagster", "fleet_pipelines.definitions",
           "fleet_pipelines.storage", "fleet_pipelines.engine._preload")
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _boot_id() -> str:
    try:
        return _BOOT_ID.read_text().strip()
    except OSError:
        return ""


def _start_ticks(pid: int) -> str | None:
    """The start time of process ``pid`` (``/proc/<pid>/stat`` field 22), ``None`` when no such
    process lives (a zombie counts as gone: it has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
    if not fields or fields[0] in {"Z", "X"}:
        return None
    return fields[19]


def run_worker_of(run: DagsterRun) -> tuple[str, int, str] | None:
    """Boot id, pid and start time of the forked worker of ``run``, if it had one."""
    tag = run.tags.get(RUN_WORKER_TAG)
    if not tag:
        return None
    boot, pid, start = tag.split(":")
    return boot, int(pid), start


def _alive(worker: tuple[str, int, str]) -> bool | None:
    """Whether the worker still runs; ``None`` when this machine cannot tell (another boot)."""
    boot, pid, start = worker
    if boot != _boot_id():
        return None
    return _start_ticks(pid) == start


def _run(run_id: str, ref: str) -> None:
    """The forked run worker: execute ``run_id`` on the instance ``ref`` names, as ``dagster
    api execute_run`` does; with the cyclic collector on (off in the fork server, which froze
    what it imported: fleet_pipelines/_collector_off.py)."""
    gc.enable()
    with capture_interrupts():
        instance = DagsterInstance.from_ref(deserialize_value(ref, InstanceRef))
        with instance:
            code = execute_run_body(run_id, instance)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


class ForkingRunLauncher(DefaultRunLauncher):
    """Launches a run in a child of a warm fork server (see the module's docstring); runs it
    cannot fork go to :class:`dagster.DefaultRunLauncher`."""

    def __init__(self, inst_data: ConfigurableClassData | None = None,
                 preload: Sequence[str] = PRELOAD) -> None:
        super().__init__(inst_data=inst_data)
        self.preload = list(preload)
        self._context: Any = None
        self._lock = threading.Lock()

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {"preload": Field(Array(str), is_required=False, default_value=list(PRELOAD),
                                 description="Modules the fork server imports once.")}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData,
                          config_value: Mapping[str, Any]) -> ForkingRunLauncher:
        return cls(inst_data=inst_data, preload=config_value.get("preload", PRELOAD))

    def _fork_context(self) -> Any:
        with self._lock:
            if self._context is None:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(self.preload)
                self._context = context
            return self._context

    def forks(self, run: DagsterRun) -> str | None:
        """Why ``run`` goes to the default launcher, or ``None`` when it is forked here."""
        origin = run.job_code_origin
        if origin is None:
            return "the run has no code origin"
        from fleet.verify.execution import interpreter_name

        executable = origin.repository_origin.executable_path
        if executable is None or (interpreter_name(os.path.abspath(executable))
                                  != interpreter_name(os.path.abspath(sys.executable))):
            return (f"its code location runs on {executable}, the launcher on "
                    f"{sys.executable}")
        if origin.repository_origin.container_image:
            return f"its code location runs in the image {origin.repository_origin.container_image}"
        return None

    def launch_run(self, context: Any) -> None:
        run: DagsterRun = context.dagster_run
        instance = self._instance
        why_not = self.forks(run)
        if why_not is not None:
            instance.report_engine_event(
                f"Launching the run through the code server: {why_not}.", run, cls=type(self))
            super().launch_run(context)
            return
        ref = serialize_value(instance.get_ref())
        process = self._fork_context().Process(target=_run, args=(run.run_id, ref),
                                               name=f"dagster-run-{run.run_id[:8]}")
        process.start()
        # not this process's to join at exit: a run outlives the daemon that launched it, as
        # a run started by a code server does
        multiprocessing.process._children.discard(process)  # type: ignore[attr-defined]
        pid = process.pid
        assert pid is not None
        start = _start_ticks(pid)
        instance.add_run_tags(run.run_id, {RUN_WORKER_TAG: f"{_boot_id()}:{pid}:{start or 0}"})
        instance.report_engine_event(
            f"Run worker forked from the warm fork server (pid {pid}).", run, cls=type(self))
        threading.Thread(target=self._watch, args=(run.run_id, process, start),
                         name=f"fleet-run-watch-{run.run_id[:8]}", daemon=True).start()

    def _watch(self, run_id: str, process: BaseProcess, start: str | None) -> None:
        """Report a run whose worker exited before the run finished as failed, with its exit
        code (what Dagster's code server does for the runs it spawned). The exit code comes
        through the fork server: if that server is gone first (its exit code reads 255), the
        worker itself is waited for by its pid and start time before anything is reported."""
        process.join()
        while start is not None and process.pid is not None and (
                _start_ticks(process.pid) == start):
            time.sleep(2.0)
        with contextlib.suppress(Exception):  # the instance may be closing with the daemon
            instance = self._instance
            run = instance.get_run_by_id(run_id)
            if run is None or run.is_finished:
                return
            code = process.exitcode if process.exitcode is not None else -1
            instance.report_engine_event(
                get_run_crash_explanation(prefix=f"Run worker of {run_id} (pid {process.pid})",
                                          exit_code=code), run, cls=type(self))
            instance.report_run_failed(run)

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        worker = run_worker_of(run)
        if worker is None:  # launched by the code server, which watches it
            return CheckRunHealthResult(WorkerStatus.RUNNING, "launched by the code server")
        alive = _alive(worker)
        if alive is None:
            return CheckRunHealthResult(WorkerStatus.RUNNING,
                                        "forked on another boot or machine: not checked here")
        if alive:
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(WorkerStatus.FAILED,
                                    f"its run worker (pid {worker[1]}) is gone")

    def terminate(self, run_id: str) -> bool:
        if not self.has_instance:
            return False
        instance = self._instance
        run = instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return False
        worker = run_worker_of(run)
        if worker is None:
            return bool(super().terminate(run_id))
        instance.report_run_canceling(run)
        if not _alive(worker):
            instance.report_engine_event(
                f"Could not terminate: the run worker (pid {worker[1]}) is not running on this "
                "machine.", run, cls=type(self))
            return False
        try:
            os.kill(worker[1], signal.SIGINT)
        except ProcessLookupError:
            return False
        return True
