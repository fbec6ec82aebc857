"""A code server fleet starts: ``dagster code-server start`` for the code location of a
workspace, and a workspace file naming it as a ``grpc_server`` location.

Two users. The daemon fleet starts on the embedded default loads its code location from one
such server on a socket (see ``_daemon``). A deployment runs one as a service of its own
(deploy/docker-compose.yaml's ``code``, on a TCP port; tests/distributed starts it the same way):
its daemon, webserver and sweeps load the location from it (``FLEET_WORKSPACE``). A daemon given
a ``python_module`` location instead starts a code server of its own and replaces it every 60 s
(``RELOAD_WORKSPACE_INTERVAL`` of ``dagster._daemon.controller``: a fresh process importing Dagster
and the definitions each time, ~2.5-3 CPU-s), and each sweep process started another.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import yaml

from fleet_pipelines.engine._procs import die_with_parent, is_process, stop_group

__all__ = ["CODE_SERVER_WORKSPACE", "CodeServerFailed", "CodeServerProcess", "location_of"]

CODE_SERVER_WORKSPACE = "fleet-daemon.workspace.yaml"  # the daemon's: the code server's socket
LOOPBACK = "127.0.0.1"


class CodeServerFailed(Exception):
    """The code server did not start (it exited, or did not listen in time)."""


def location_of(workspace: Path) -> tuple[str, Path, str]:
    """Module, working directory and location name of the one ``python_module`` location of
    ``workspace`` (KeyError when it has none, ValueError when it has several)."""
    loaded = yaml.safe_load(workspace.read_text())
    (entry,) = loaded["load_from"]
    module = entry["python_module"]
    working = (workspace.parent / module.get("working_directory", ".")).resolve()
    return module["module_name"], working, module.get("location_name", module["module_name"])


class CodeServerProcess:
    """``dagster code-server start`` for the one ``python_module`` location of ``workspace``, in
    its own process group, on a socket (or on ``port`` of the loopback), its output in
    ``log``; its pid in ``<state>/fleet-code-server.pid`` and ``<state>/``
    :data:`CODE_SERVER_WORKSPACE` naming it as a ``grpc_server`` location of the same name
    (``state``: ``dagster_home`` unless given). Its ``ReloadCode`` (a workspace's
    ``reload_code_location``) replaces the process that loaded the code, behind the same
    address."""

    def __init__(self, dagster_home: Path, workspace: Path,
                 env: Mapping[str, str] | None = None, *, state: Path | None = None,
                 port: int | None = None) -> None:
        self.workspace = workspace
        self.env = {**os.environ, **(env or {}), "DAGSTER_HOME": str(dagster_home)}
        self.log = dagster_home / "fleet-daemon.log" if state is None else state / "code-server.log"
        state = state or dagster_home
        self.workspace_file = state / CODE_SERVER_WORKSPACE
        self.pidfile = state / "fleet-code-server.pid"
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None  # the one this process started

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
        return pid if is_process(pid, b"code-server") else None

    def serving(self) -> int | None:
        """The recorded server's pid when it also accepts a connection, else None: a server
        killed a moment ago can still be a process (not yet a zombie) for a while, and a daemon
        restarted on it would load nothing."""
        pid = self.pid()
        if pid is None:
            return None
        return pid if self._accepts(self._socket() if self.port is None else None) else None

    def start(self, timeout_s: float = 300.0) -> int:
        module, working, location = location_of(self.workspace)
        sock: Path | None = None
        if self.port is None:
            sock = self._socket()
            sock.parent.mkdir(parents=True, exist_ok=True)
            sock.unlink(missing_ok=True)
            where: list[str] = ["-s", str(sock)]
            entry: dict[str, object] = {"socket": str(sock)}
        else:
            where = ["-h", LOOPBACK, "-p", str(self.port)]
            entry = {"host": LOOPBACK, "port": self.port}
        # dagster, its start-up imports without the cyclic collector (_dagster_entry)
        command = [sys.executable, "-m", "fleet_pipelines._dagster_entry", "dagster"]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            proc = subprocess.Popen(
                [*command, "code-server", "start", "-m", module, "-d", str(working),
                 "--location-name", location, *where, "--log-level", "warning",
                 "--inject-env-vars-from-instance"],
                env=self.env, cwd=str(working), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=die_with_parent)
        self.proc = proc
        deadline = time.monotonic() + timeout_s
        while not self._accepts(sock):  # it listens once its code is loaded
            if proc.poll() is not None or time.monotonic() > deadline:
                stop_group(proc.pid)
                proc.wait()
                self.proc = None
                raise CodeServerFailed(f"the code server did not start (exit {proc.poll()}, "
                                       f"log {self.log})")
            time.sleep(0.1)
        self.pidfile.parent.mkdir(parents=True, exist_ok=True)
        self.pidfile.write_text(str(proc.pid))
        self.workspace_file.write_text(yaml.safe_dump(
            {"load_from": [{"grpc_server": {**entry, "location_name": location}}]}))
        return proc.pid

    def _accepts(self, sock: Path | None) -> bool:
        if sock is not None:
            with socket.socket(socket.AF_UNIX) as probe:
                try:
                    probe.connect(str(sock))
                except OSError:
                    return False
            return True
        try:
            socket.create_connection((LOOPBACK, self.port), timeout=1.0).close()
        except OSError:
            return False
        return True

    def stop(self) -> None:
        """Stop the server whose pid is recorded here (whoever started it)."""
        pid = self.pid()
        if pid is not None:
            stop_group(pid)
        if self.proc is not None:  # reap the one this process started
            self.proc.wait()
            self.proc = None
        sock = self._socket() if self.port is None else None
        self.pidfile.unlink(missing_ok=True)
        self.workspace_file.unlink(missing_ok=True)
        if sock is not None:
            sock.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                sock.parent.rmdir()
