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

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import yaml
from dagster import DagsterInstance

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
CODE_SERVER_WORKSPACE = "fleet-daemon.workspace.yaml"  # the daemon's: the code server's socket


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
        exe = Path(sys.executable).with_name("dagster-daemon")
        command = [str(exe)] if exe.exists() else [sys.executable, "-m", "dagster._daemon"]
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


class CodeServerFailed(Exception):
    """The code server did not start (it exited, or did not listen in time)."""


class CodeServerProcess:
    """``dagster code-server start`` for the one ``python_module`` location of ``workspace``,
    on a socket, in its own process group, its output in the daemon's log; its pid in
    ``<dagster_home>/fleet-code-server.pid`` and ``<dagster_home>/``:data:`CODE_SERVER_WORKSPACE`
    naming it as a ``grpc_server`` location of the same name. Its ``ReloadCode`` (a workspace's
    ``reload_code_location``) replaces the process that loaded the code, behind the same socket."""

    def __init__(self, dagster_home: Path, workspace: Path,
                 env: Mapping[str, str] | None = None) -> None:
        self.workspace = workspace
        self.env = {**os.environ, **(env or {}), "DAGSTER_HOME": str(dagster_home)}
        self.log = dagster_home / "fleet-daemon.log"
        self.workspace_file = dagster_home / CODE_SERVER_WORKSPACE
        self.pidfile = dagster_home / "fleet-code-server.pid"
        self.proc: subprocess.Popen[bytes] | None = None  # the one this process started

    def _location(self) -> tuple[str, Path, str]:
        """Module, working directory and location name of the workspace's one location."""
        loaded = yaml.safe_load(self.workspace.read_text())
        (entry,) = loaded["load_from"]
        module = entry["python_module"]
        working = (self.workspace.parent / module.get("working_directory", ".")).resolve()
        return module["module_name"], working, module.get("location_name", module["module_name"])

    def _socket(self) -> Path:
        """The socket of the last server started here (a restart keeps it: a workspace opened
        on it reconnects), else a new one (short: a socket path has at most 107 bytes)."""
        with contextlib.suppress(OSError, TypeError, KeyError, IndexError, yaml.YAMLError):
            loaded = yaml.safe_load(self.workspace_file.read_text())
            return Path(loaded["load_from"][0]["grpc_server"]["socket"])
        return Path(tempfile.mkdtemp(prefix="fleet-code-")) / "grpc.sock"

    def pid(self) -> int | None:
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _is_process(pid, b"code-server") else None

    def start(self, timeout_s: float = 300.0) -> int:
        module, working, location = self._location()
        sock = self._socket()
        sock.parent.mkdir(parents=True, exist_ok=True)
        sock.unlink(missing_ok=True)
        exe = Path(sys.executable).with_name("dagster")
        command = [str(exe)] if exe.exists() else [sys.executable, "-m", "dagster"]
        with self.log.open("ab") as out:
            proc = subprocess.Popen(
                [*command, "code-server", "start", "-m", module, "-d", str(working),
                 "--location-name", location, "-s", str(sock), "--log-level", "warning",
                 "--inject-env-vars-from-instance"],
                env=self.env, cwd=str(working), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent)
        self.proc = proc
        deadline = time.monotonic() + timeout_s
        while not _accepts(sock):  # it listens once its code is loaded
            if proc.poll() is not None or time.monotonic() > deadline:
                _stop_group(proc.pid)
                proc.wait()
                self.proc = None
                raise CodeServerFailed(f"the code server did not start (exit {proc.poll()}, "
                                       f"log {self.log})")
            time.sleep(0.1)
        self.pidfile.write_text(str(proc.pid))
        self.workspace_file.write_text(yaml.safe_dump(
            {"load_from": [{"grpc_server": {"socket": str(sock), "location_name": location}}]}))
        return proc.pid

    def stop(self) -> None:
        """Stop the server whose pid is recorded here (whoever started it)."""
        pid = self.pid()
        if pid is not None:
            _stop_group(pid)
        if self.proc is not None:  # reap the one this process started
            self.proc.wait()
            self.proc = None
        sock = self._socket()
        self.pidfile.unlink(missing_ok=True)
        self.workspace_file.unlink(missing_ok=True)
        sock.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            sock.parent.rmdir()


def _accepts(sock: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(sock))
        except OSError:
            return False
    return True


def _stop_group(pid: int, grace_s: float = 5.0) -> None:
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _alive(pid) and not _zombie(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    _signal_group(pid, signal.SIGKILL)


def _die_with_parent() -> None:
    """In the child: SIGTERM when the thread that started it ends, so a killed sweep or server
    leaves no daemon behind (another fleet process using it then starts its own)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _is_process(pid: int, name: bytes) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return name in cmdline and not _zombie(pid)


def _is_daemon(pid: int) -> bool:
    return _is_process(pid, b"dagster-daemon")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
        (the daemon then starts code servers of its own)."""
        if self.code.pid() is not None and self.workspace_for(self.env) is None:
            self.code.stop()  # another daemon's, with other settings: its runs would get them
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


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
