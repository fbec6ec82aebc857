"""A daemon restarted right after its code server was killed gets a new code server
(fleet_pipelines/engine/_daemon.py ``SharedDaemon._code_server``): a server killed with -9 can
still be a process for a moment (not yet a zombie), and a daemon started on it loaded no code
location and could not retry the run it had lost (test_run_retries failed so once under
``-n 3``, 4 Dec 2026: "Failed to retry run", the socket refused). A recorded server counts only
when its socket accepts a connection."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from fleet_pipelines.engine import WORKSPACE, SharedDaemon
from fleet_pipelines.engine._procs import stop_group


def test_a_recorded_code_server_that_no_longer_answers_is_replaced(tmp_path: Path) -> None:
    home = tmp_path / "dagster"
    home.mkdir()
    shared = SharedDaemon(home, WORKSPACE, {})
    # a process recorded as the code server, alive, named so, that accepts nothing (a server
    # being killed); its socket as the last server's workspace names it
    dying = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)",
                              "code-server"], start_new_session=True)
    sock = tmp_path / "gone" / "grpc.sock"
    sock.parent.mkdir()
    shared.code.pidfile.write_text(str(dying.pid))
    shared.code.workspace_file.write_text(
        f"load_from:\n- grpc_server: {{socket: {sock}, location_name: fleet}}\n")
    shared.envfile.write_text("{}")
    try:
        deadline = time.monotonic() + 30  # until the child has exec'd (its command line)
        while shared.code.pid() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert shared.code.pid() == dying.pid  # a process, by its command line
        assert shared.code.serving() is None  # but no server
        workspace = shared._code_server()
        started = shared.code.pid()
        assert started is not None and started != dying.pid
        assert shared.code.serving() == started
        assert workspace == shared.code.workspace_file
        assert dying.wait(10) is not None  # the one that no longer answered was stopped
    finally:
        shared.code.stop()
        if dying.poll() is None:
            stop_group(dying.pid)
        dying.wait()
