"""The Dagster daemon of an instance: is one serving it, and start one when none is.

A queued run only starts when a daemon dequeues it. A deployment runs its own daemon (the
compose file's ``daemon`` service, the Helm chart's ``dagster-daemon``); the embedded default
has none, so ``fleet sweep`` starts ``dagster-daemon run`` on the instance for the length of the
sweep and says so. Only the process group it started is ever stopped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from dagster import DagsterInstance

# A live daemon writes a heartbeat every 30 s (dagster._daemon.controller); two missed beats and
# some slack mean it is gone.
STALE_AFTER_S = 75.0
QUEUED_DAEMON = "QUEUED_RUN_COORDINATOR"


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
    """A daemon is dequeuing the runs of ``instance`` (it beat within ``STALE_AFTER_S``)."""
    age = heartbeat_age(instance)
    return age is not None and age < STALE_AFTER_S


class DaemonProcess:
    """``dagster-daemon run`` on ``dagster_home`` with ``workspace``, in its own process group,
    its output in ``<dagster_home>/fleet-daemon.log``."""

    def __init__(self, dagster_home: Path, workspace: Path,
                 env: Mapping[str, str] | None = None) -> None:
        self.dagster_home = dagster_home
        self.workspace = workspace
        self.env = {**os.environ, **(env or {}), "DAGSTER_HOME": str(dagster_home)}
        self.log = dagster_home / "fleet-daemon.log"  # Dagster empties logs/
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> int:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        exe = Path(sys.executable).with_name("dagster-daemon")
        command = [str(exe)] if exe.exists() else [sys.executable, "-m", "dagster._daemon"]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*command, "run", "-w", str(self.workspace)], env=self.env,
                cwd=str(self.workspace.parent), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent)
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 20.0) -> None:
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


def _die_with_parent() -> None:
    """In the child: SIGTERM when the thread that started it ends (a killed sweep or server
    leaves no daemon behind)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
