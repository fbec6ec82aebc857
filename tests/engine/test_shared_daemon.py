"""The daemon fleet starts on an instance is shared by the fleet processes using it: a second
process joins the running one instead of starting another, a user leaving does not stop it, the
last user leaving does (and its last heartbeats are then not taken for a live daemon); a starter
killed with -9 takes its daemon along (no daemon is ever leaked) and the next user starts one."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fleet_pipelines.engine import WORKSPACE, SharedDaemon
from fleet_pipelines.engine._daemon import _is_daemon, _is_process

pytestmark = [pytest.mark.slow]

OTHER = """
import sys
from pathlib import Path
from fleet_pipelines.engine import WORKSPACE, SharedDaemon
shared = SharedDaemon(Path(sys.argv[1]), WORKSPACE, {})
pid, started = shared.join()
print(pid, started, flush=True)
sys.stdin.readline()
shared.leave()
print("left", flush=True)
"""


def _other(home: Path) -> tuple[subprocess.Popen[str], int, bool]:
    proc = subprocess.Popen([sys.executable, "-c", OTHER, str(home)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pid, started = proc.stdout.readline().split()
    return proc, int(pid), started == "True"


def _code_server(home: Path) -> int:
    """The code server the daemon loads its location from (started beside it)."""
    pid = int((home / "fleet-code-server.pid").read_text())
    assert _is_process(pid, b"code-server")
    assert "grpc_server" in (home / "fleet-daemon.workspace.yaml").read_text()
    return pid


def _gone(pid: int, timeout_s: float = 30.0, name: bytes = b"dagster-daemon") -> bool:
    deadline = time.monotonic() + timeout_s
    while _is_process(pid, name):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _end(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


def test_the_last_user_stops_the_shared_daemon(tmp_path: Path) -> None:
    home = tmp_path / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    mine = SharedDaemon(home, WORKSPACE, {})
    pid, started = mine.join()
    assert started and _is_daemon(pid)
    code = _code_server(home)
    other, seen, other_started = _other(home)
    try:
        assert (seen, other_started) == (pid, False)  # joined, not a second daemon
        assert other.stdin is not None and other.stdout is not None
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.stdout.readline().strip() == "left"
        assert other.wait(30) == 0
        assert _is_daemon(pid)  # still used by this process
        mine.leave()
        assert _gone(pid), "the last user's leave did not stop it"
        assert _gone(code, name=b"code-server"), "its code server outlived it"
        assert (home / "fleet-daemon.stopped").is_file()
        assert not (home / "fleet-daemon.pid").exists()
        assert not (home / "fleet-code-server.pid").exists()
    finally:
        _end(other)


def test_a_killed_starter_leaks_no_daemon(tmp_path: Path) -> None:
    home = tmp_path / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    starter, pid, started = _other(home)
    try:
        assert started and _is_daemon(pid)
        code = _code_server(home)
        starter.send_signal(signal.SIGKILL)
        starter.wait()
        assert _gone(pid), "the daemon outlived the process that started it"
        assert _gone(code, name=b"code-server"), "its code server outlived the starter"
        mine = SharedDaemon(home, WORKSPACE, {})
        again, restarted = mine.join()  # the killed user is not counted, its daemon is gone
        assert restarted and again != pid
        assert _code_server(home) != code  # a code server of its own again
        mine.leave()
        assert _gone(again)
    finally:
        _end(starter)
