"""SIGTERM ends fleet's processes when they were started with SIGINT ignored (a background job of
a non-interactive shell: ``fleet sweep &`` in a script, ``nohup fleet demo &``).

Dagster maps SIGTERM to SIGINT's handler (``setup_interrupt_handlers``), at the start of its
daemon and code servers and again each time ``capture_interrupts`` restores SIGINT's handler. On
5 December 2026 ``fleet demo`` started with SIGINT ignored and ended by SIGTERM left its code
server and that server's gRPC child running, both ignoring SIGTERM (the parent-death SIGTERM
fleet gives them did nothing). ``fleet_pipelines._startup.terminable`` (called by every entry
fleet owns) keeps SIGINT ignored and has SIGTERM raise ``KeyboardInterrupt``."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests._procs import children

ROOT = Path(__file__).resolve().parents[2]


def _sigint_ignored() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


AFTER_AN_EXECUTION = textwrap.dedent("""
    import sys, time
    from dagster._utils.interrupts import capture_interrupts
    if sys.argv[1] == "fleet":
        from fleet_pipelines._startup import own_process
        own_process()
    with capture_interrupts():  # what each in-process execution does
        pass
    print("ready", flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("entry", ["fleet", "plain"])
def test_sigterm_after_an_in_process_execution(entry: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", AFTER_AN_EXECUTION, entry], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_sigint_ignored)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGINT)
        assert not _gone(proc.pid, 1.0), "SIGINT is no longer ignored"
        proc.send_signal(signal.SIGTERM)
        if entry == "plain":  # Dagster's own behaviour, what the fix is for
            assert not _gone(proc.pid, 2.0), "Dagster no longer makes SIGTERM ignored here"
            return
        assert proc.wait(timeout=10) == -signal.SIGINT  # Python's end on a KeyboardInterrupt
        assert proc.stderr is not None and "KeyboardInterrupt" in proc.stderr.read()
    finally:
        proc.kill()
        proc.communicate()


STARTS_A_CODE_SERVER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from dagster._grpc.client import DagsterGrpcClient
    from fleet_pipelines.engine import WORKSPACE, CodeServerProcess
    home = Path(sys.argv[1])
    code = CodeServerProcess(home, WORKSPACE, {})
    pid = code.start()
    DagsterGrpcClient(socket=str(code._socket()), host="localhost").list_repositories()
    print(pid, flush=True)
    sys.stdin.readline()  # then ends: the code server is given SIGTERM (die_with_parent)
""")


def test_a_code_server_ends_with_the_process_that_started_it(tmp_path: Path) -> None:
    home = tmp_path / "dagster"
    home.mkdir()
    parent = subprocess.Popen([sys.executable, "-c", STARTS_A_CODE_SERVER, str(home)], cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              preexec_fn=_sigint_ignored)
    started: list[int] = []
    try:
        assert parent.stdout is not None and parent.stdin is not None
        server = int(parent.stdout.readline())
        started = [server, *(pid for pid, _ in children(server))]
        assert len(started) == 2, children(server)  # the server and the gRPC child it loads in
        for pid in started:
            ignored = int(next(line for line in Path(f"/proc/{pid}/status").read_text()
                               .splitlines() if line.startswith("SigIgn:")).split()[1], 16)
            assert not ignored & (1 << (signal.SIGTERM - 1)), pid
        parent.communicate("\n", timeout=30)
        assert parent.returncode == 0
        left = [pid for pid in started if not _gone(pid, 30.0)]
        assert not left, f"left running after their parent ended: {left}"
    finally:
        parent.kill()
        parent.communicate()
        _kill(started)
