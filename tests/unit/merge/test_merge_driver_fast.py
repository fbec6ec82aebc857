"""The driver's fast line (``python -S .../_run_driver.py``): a real ``git merge`` through it,
git's bytes kept on a clean line merge, the structural stage still reached (``site`` loaded only
then), nothing but the interpreter's own start-up imported when lines merge cleanly, and only the
warm server's client (``_socket``, no ``site``, no libcst) when they conflict and a server runs."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fleet.merge import _client, driver
from tests.unit.merge._branches import commit_branches, run_git

BASE = "import os\n\n\ndef f():\n    return 1\ndef g():\n    return 2\n"


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_git(repo, *args, check=check)


def _commit_branches(repo: Path, ours: str, theirs: str) -> None:
    commit_branches(repo, BASE, ours, theirs, line=f"{driver.fast_command()} %O %A %B %P")


def test_fast_line_merges_structurally_under_git_merge(git_repo: Path) -> None:
    ours = BASE.replace("import os\n", "import os\nimport re\n").replace("return 1", "return 10")
    theirs = BASE.replace("import os\n", "import os\nimport sys\n")
    _commit_branches(git_repo, ours, theirs)
    merge = _git(git_repo, "merge", "--no-edit", "theirs", check=False)
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert (git_repo / "mod.py").read_text() == (
        "import os\nimport re\nimport sys\n\n\ndef f():\n    return 10\ndef g():\n    return 2\n"
    )


def test_fast_line_leaves_git_labelled_markers_on_a_true_conflict(git_repo: Path) -> None:
    _commit_branches(git_repo, BASE.replace("return 1", "return 10"), BASE.replace("1", "20"))
    merge = _git(git_repo, "merge", "--no-edit", "theirs", check=False)
    assert merge.returncode == 1
    text = (git_repo / "mod.py").read_text()
    assert "<<<<<<< HEAD\n" in text and ">>>>>>> theirs\n" in text


def test_fast_line_imports_nothing_when_lines_merge_cleanly(tmp_path: Path) -> None:
    paths = [tmp_path / name for name in ("base", "ours", "theirs")]
    sides = (BASE, BASE.replace("return 1", "return 3"), BASE.replace("return 2", "return 4"))
    for path, text in zip(paths, sides, strict=True):
        path.write_bytes(text.encode())
    expected = subprocess.run(
        ["git", "merge-file", "-p", "--diff3", *map(str, (paths[1], paths[0], paths[2]))],
        capture_output=True,
        check=True,
    ).stdout
    script = str(Path(driver.__file__).resolve().parent / "_run_driver.py")

    def imported(*command: str) -> set[str]:
        proc = subprocess.run(
            [sys.executable, "-S", "-X", "importtime", *command], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
        return {line.rsplit("|", 1)[1].strip() for line in lines}

    start_up = imported("-c", "import os, sys")  # the two the driver needs
    own = {"__future__", "fleet", "fleet.errors", "fleet.merge", "fleet.merge.driver"}
    assert imported(script, *map(str, paths), "m.py") - start_up == own
    assert paths[1].read_bytes() == expected


def _imported(*command: str, env: dict[str, str]) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines}


def test_fast_line_imports_only_the_client_when_a_warm_server_merges(tmp_path: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="fms-", dir="/tmp"))  # AF_UNIX paths stop at 108 bytes
    env = {**os.environ, _client.ENABLE_ENV: "1", _client.DIR_ENV: str(folder)}
    root = str(Path(driver.__file__).resolve().parent.parent.parent)
    boot = (
        "import sys; sys.path.insert(0, sys.argv[1]); from fleet.merge._server import main;"
        " raise SystemExit(main(sys.argv[2:]))"
    )
    server = subprocess.Popen(
        [sys.executable, "-S", "-c", boot, root, str(folder), "120"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        sock_path = _client.paths(str(folder), _client.code_key())[0]
        deadline = time.monotonic() + 60
        while not os.path.exists(sock_path) and time.monotonic() < deadline:
            time.sleep(0.02)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(sock_path)  # listening: warmed up
        probe.close()
        paths = [tmp_path / name for name in ("base", "ours", "theirs")]
        ours = BASE.replace("import os\n", "import os\nimport re\n")
        ours = ours.replace("return 1", "return 10")
        theirs = BASE.replace("import os\n", "import os\nimport sys\n")
        for path, text in zip(paths, (BASE, ours, theirs), strict=True):
            path.write_text(text)
        script = str(Path(driver.__file__).resolve().parent / "_run_driver.py")
        start_up = _imported("-c", "import os, sys", env=env)
        own = {"__future__", "fleet", "fleet.errors", "fleet.merge", "fleet.merge.driver"}
        client = {"fleet.merge._client", "_socket"}
        assert _imported(script, *map(str, paths), "m.py", env=env) - start_up == own | client
        assert paths[1].read_text() == ours.replace("import re\n", "import re\nimport sys\n")
        logs = "".join(log.read_text() for log in folder.glob("*.log"))
        assert " served m.py exit 0 " in logs  # merged by the server, not in the process
    finally:
        server.kill()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
