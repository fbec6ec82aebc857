"""Helpers of the warm merge server's tests (test_merge_server.py,
test_merge_server_faults.py): real processes, each test with its own socket directory
(the ``folder`` fixture: conftest.py), every process a test starts stopped by its PID."""


import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from fleet.merge import _client, driver
from tests.unit.merge._branches import commit_branches, run_git

ROOT = Path(driver.__file__).resolve().parent.parent.parent
RUN_DRIVER = str(Path(driver.__file__).resolve().parent / "_run_driver.py")
FIXTURES = ROOT / "tests" / "fixtures" / "merge"
BASE = "import os\n\n\ndef f():\n    return 1\ndef g():\n    return 2\n"
STRUCTURAL = (  # git conflicts on the imports, the structural stage resolves it
    BASE.replace("import os\n", "import os\nimport re\n").replace("return 1", "return 10"),
    BASE.replace("import os\n", "import os\nimport sys\n"),
)
TRUE_CONFLICT = (BASE.replace("return 1", "return 10"), BASE.replace("1", "20"))
BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); from fleet.merge._server import main;"
    " raise SystemExit(main(sys.argv[2:]))"
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _has_socket(pid: int) -> bool:
    try:
        return any(
            os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
            for fd in os.listdir(f"/proc/{pid}/fd")
        )
    except OSError:
        return False


def _server_pids(folder: Path) -> list[int]:
    """The live servers of ``folder`` (their PIDs from the lock files, checked against their
    command lines so that a reused PID is never touched)."""
    pids = []
    for lock in folder.glob("merge-*.lock"):
        text = lock.read_text().strip()
        if text.isdigit() and _alive(int(text)):
            line = _cmdline(int(text))
            if "fleet.merge._server" in line and str(folder) in line:
                pids.append(int(text))
    return pids


def _wait(predicate: object, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def _served(folder: Path) -> int:
    """How many merges the servers of ``folder`` have answered (one log line each)."""
    return sum(log.read_text().count(" served ") for log in folder.glob("merge-*.log"))


def _socket_path(folder: Path) -> Path:
    return Path(_client.paths(str(folder), _client.code_key())[0])


def _ready(folder: Path) -> bool:
    path = _socket_path(folder)
    if not path.exists():
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def _servers_of(folder: Path) -> list[int]:
    """Every live process started as a server of ``folder`` (its path is on the command line;
    the folder is this test's own), a starting one or one serving a request included."""
    return [
        pid
        for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
        if _alive(pid) and "fleet.merge._server" in (line := _cmdline(pid)) and str(folder) in line
    ]


def _kill_servers(folder: Path) -> list[int]:
    """SIGKILL the servers of ``folder`` and their children, until none is seen twice in a row
    (one may be between its two forks); the PIDs killed."""
    killed: list[int] = []
    quiet = 0
    while quiet < 2:
        found = _servers_of(folder)
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # it ended (idle, or its request done) since it was listed
                continue
            killed.append(pid)
        quiet = 0 if found else quiet + 1
        time.sleep(0.2)
    return killed


def _foreground(root: Path, folder: Path, idle: float = 120) -> subprocess.Popen[bytes]:
    """A server of the code under ``root`` run by the test itself (killed by the caller)."""
    command = [sys.executable, "-S", "-c", BOOT, str(root), str(folder), str(idle)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _write(folder: Path, base: str, ours: str, theirs: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / name for name in ("base.py", "ours.py", "theirs.py")]
    for path, text in zip(paths, (base, ours, theirs), strict=True):
        path.write_text(text)
    return paths


def _fast_line(paths: list[Path], *, server: bool, timeout: float = 120) -> tuple[int, bytes, str]:
    """(exit status, OURS afterwards, stderr) of the driver's fast line as a process."""
    env = {**os.environ, _client.ENABLE_ENV: "1" if server else "0"}
    command = [sys.executable, "-S", RUN_DRIVER, *map(str, paths), "mod.py"]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    return proc.returncode, paths[1].read_bytes(), proc.stderr


def _start_and_wait(folder: Path, tmp_path: Path) -> int:
    """Start the server as the driver does (one conflicted merge) and wait until it listens."""
    _fast_line(_write(tmp_path / "start", BASE, *TRUE_CONFLICT), server=True)
    assert _wait(lambda: _ready(folder)), list(folder.iterdir())
    (pid,) = _server_pids(folder)
    return pid


def _git_merge(repo: Path, ours: str, theirs: str, line: str) -> tuple[int, bytes]:
    commit_branches(repo, BASE, ours, theirs, line=line)
    merge = run_git(repo, "merge", "--no-edit", "theirs", check=False)
    return merge.returncode, (repo / "mod.py").read_bytes()


def _new_repo(path: Path) -> Path:
    path.mkdir()
    run_git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("test repo\n")
    run_git(path, "add", "-A")
    run_git(path, "commit", "-q", "-m", "initial")
    return path


