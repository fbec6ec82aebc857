"""The Dagster daemon of an instance: is one serving it, and start one when none is.

A queued run only starts when a daemon dequeues it. A deployment runs its own daemon (the
compose file's ``daemon`` service, the Helm chart's ``dagster-daemon``); the embedded default
has none, so ``fleet sweep`` starts ``dagster-daemon run`` on the instance for the length of the
sweep and says so. Only the process group it started is ever stopped.

The daemon fleet starts loads its code location from one code server fleet starts beside it
(``dagster code-server start``, on a socket, named like the workspace's location), not from a
code server of its own: Dagster's daemon replaces its own code server every 60 s (a fresh process
loading the definitions, ~3-5 CPU-s each), and the sweeps on the instance use the same server
(one process instead of one each), which reloads its code when a sweep needs new assets.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import yaml
from dagster import DagsterInstance

from fleet_pipelines.engine._code_server import (
    CODE_SERVER_WORKSPACE,
    CodeServerFailed,
    CodeServerProcess,
    location_of,
)
from fleet_pipelines.engine._procs import alive as _alive
from fleet_pipelines.engine._procs import die_with_parent as _die_with_parent
from fleet_pipelines.engine._procs import is_process as _is_process
from fleet_pipelines.engine._procs import signal_group as _signal_group

__all__ = [
    "CODE_SERVER_WORKSPACE",
    "QUEUED_DAEMON",
    "STALE_AFTER_S",
    "STOPPED",
    "CodeServerProcess",
    "DaemonProcess",
    "SharedDaemon",
    "heartbeat_age",
    "needs_daemon",
    "serving",
]

# A live daemon writes a heartbeat every 30 s (dagster._daemon.controller); two missed beats and
# some slack mean it is gone.
STALE_AFTER_S = 75.0
QUEUED_DAEMON = "QUEUED_RUN_COORDINATOR"
STOPPED = "fleet-daemon.stopped"  # when fleet last stopped a daemon it started here


def needs_daemon(instance: DagsterInstance) -> bool:
    """Runs submitted to ``instance`` wait for a daemon (its run coordinator queues them)."""
    from dagster import QueuedRunCoordinator

    return isinstance(instance.run_coordinator, QueuedRunCoordinator)


def heartbeat_age(instance: DagsterInstance) -> float | None:
    """Seconds since the run-queue daemon of ``instance`` last beat; None if it never did."""
    beats = instance.get_daemon_heartbeats()
    beat = beats.get(QUEUED_DAEMON)
    if beat is None:
        return None
    return max(time.time() - beat.timestamp, 0.0)


def serving(instance: DagsterInstance) -> bool:
    """A daemon is dequeuing the runs of ``instance``: it beat within ``STALE_AFTER_S``, and
    after the last daemon fleet started there was stopped (whose last beats are no sign)."""
    age = heartbeat_age(instance)
    if age is None or age >= STALE_AFTER_S:
        return False
    try:
        stopped = float((Path(instance.root_directory) / STOPPED).read_text())
    except (OSError, ValueError):
        stopped = 0.0
    return time.time() - age > stopped


class DaemonProcess:
    """``dagster-daemon run`` on ``dagster_home`` with ``workspace``, in its own process group,
    its output in ``<dagster_home>/fleet-daemon.log``."""

    def __init__(self, dagster_home: Path, workspace: Path,
                 env: Mapping[str, str] | None = None) -> None:
        self.dagster_home = dagster_home
        self.workspace = workspace
        self.env = {**os.environ, **(env or {}), "DAGSTER_HOME": str(dagster_home)}
        self.log = dagster_home / "fleet-daemon.log"  # Dagster empties logs/
        self.load_from = workspace  # the workspace file it loads (its cwd: ``workspace``'s)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> int:
        if self.proc is not None:  # the one it started before has exited: reap it
            self.proc.poll()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        # dagster-daemon, its start-up imports without the cyclic collector (_dagster_entry)
        command = [sys.executable, "-m", "fleet_pipelines._dagster_entry", "dagster-daemon"]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*command, "run", "-w", str(self.load_from)], env=self.env,
                cwd=str(self.workspace.parent), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent)
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 5.0) -> None:
        """SIGTERM to the group it started (the daemon and its code server), SIGKILL after
        ``grace_s``."""
        proc = self.proc
        if proc is None:
            return
        self.proc = None
        if proc.poll() is None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
        _signal_group(proc.pid, signal.SIGKILL)  # its code server, if it outlived the daemon


def _has_module(workspace: Path) -> bool:
    """``workspace`` loads a ``python_module`` location (a code server can be started for it)."""
    try:
        location_of(workspace)
    except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError):
        return False
    return True


def _is_daemon(pid: int) -> bool:
    return _is_process(pid, b"dagster-daemon")


class SharedDaemon:
    """The daemon fleet processes start on an instance none serves, shared by every fleet
    process on it (concurrent sweeps, ``fleet serve``): its pid in
    ``<dagster_home>/fleet-daemon.pid``, each user a file in ``fleet-daemon.users/``; the last
    user to leave stops it (a user that died is not counted). All under one file lock."""

    def __init__(self, dagster_home: Path, workspace: Path, env: Mapping[str, str]) -> None:
        self.home = dagster_home
        self.env = dict(env)
        self.process = DaemonProcess(dagster_home, workspace, env)
        self.code = CodeServerProcess(dagster_home, workspace, env)
        self.envfile = dagster_home / "fleet-daemon.env.json"  # the env the two were started with
        self.pidfile = dagster_home / "fleet-daemon.pid"
        self.users = dagster_home / "fleet-daemon.users"
        self.lock = dagster_home / ".fleet-daemon.lock"
        self.joined = False

    def _pid(self) -> int | None:
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _is_daemon(pid) else None

    def join(self) -> tuple[int, bool]:
        """Use the running fleet-started daemon, or start one. Returns ``(pid, started)``."""
        from fleet.locks import hold

        with hold(self.lock, f"starting the Dagster daemon of {self.home}"):
            self.users.mkdir(parents=True, exist_ok=True)
            (self.users / str(os.getpid())).touch()
            self.joined = True
            pid = self._pid()
            if pid is not None:
                return pid, False
            self.process.load_from = self._code_server()
            pid = self.process.start()
            self.pidfile.write_text(str(pid))
            return pid, True

    def _code_server(self) -> Path:
        """The workspace file the daemon starts with: its code server's (the running one when
        a daemon that exited is restarted), else, when no code server starts, the workspace
        (the daemon then starts code servers of its own). A workspace that names a code server
        already (a deployment's ``FLEET_WORKSPACE``) is the daemon's as it is."""
        if not _has_module(self.process.workspace):
            return self.process.workspace
        if self.code.pid() is not None and (self.workspace_for(self.env) is None
                                            or self.code.serving() is None):
            # another daemon's, with other settings (its runs would get them), or one that no
            # longer answers (killed with the daemon a moment ago, not yet gone: the restarted
            # daemon could not load the code location, nor retry the run it lost)
            self.code.stop()
        if self.code.pid() is None:
            try:
                self.code.start()
                self.envfile.write_text(json.dumps(self.env, sort_keys=True))
            except (CodeServerFailed, OSError, ValueError, KeyError, TypeError) as exc:
                self.code.stop()
                self.envfile.unlink(missing_ok=True)
                with self.process.log.open("a") as log:
                    log.write(f"fleet: no code server of its own ({exc}): the daemon loads "
                              f"{self.process.workspace}\n")
                return self.process.workspace
        return self.code.workspace_file

    def workspace_for(self, env: Mapping[str, str]) -> Path | None:
        """The workspace file of this daemon's code server when it loads the code location with
        ``env`` (a sweep whose settings differ loads its own), else None."""
        if self.code.pid() is None or not self.code.workspace_file.is_file():
            return None
        try:
            started = json.loads(self.envfile.read_text())
        except (OSError, ValueError):
            return None
        return self.code.workspace_file if started == dict(env) else None

    @property
    def alive(self) -> bool:
        return self._pid() is not None

    def leave(self) -> None:
        """Stop being a user; stop the daemon if no live user is left."""
        from fleet.locks import hold

        if not self.joined:
            return
        self.joined = False
        with hold(self.lock, f"stopping the Dagster daemon of {self.home}"):
            (self.users / str(os.getpid())).unlink(missing_ok=True)
            others = [p for p in self.users.iterdir() if p.name.isdigit() and _alive(int(p.name))]
            if others:
                return
            pid = self._pid()
            if pid is not None:
                _signal_group(pid, signal.SIGTERM)
                deadline = time.monotonic() + 5  # then SIGKILL: no fleet process uses it
                while _is_daemon(pid) and time.monotonic() < deadline:
                    time.sleep(0.2)
                _signal_group(pid, signal.SIGKILL)
            self.process.stop()  # reaps it when this process started it
            self.code.stop()
            self.envfile.unlink(missing_ok=True)
            self.pidfile.unlink(missing_ok=True)
            (self.home / STOPPED).write_text(repr(time.time()))
