"""The warm merge server (``fleet.merge._server``) behind the driver, with real processes: the
driver's fast line and shell line run by real ``git merge``s, a real server started detached by
the driver or in the foreground by the test, each test with its own socket directory. Every
process a test starts is stopped by its PID (checked against its command line) at the end."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

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


@pytest.fixture
def folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private socket directory for this test's servers (short: AF_UNIX paths stop at 108
    bytes), the server turned on; every server started there is killed at the end."""
    path = Path(tempfile.mkdtemp(prefix="fms-", dir="/tmp"))
    monkeypatch.setenv(_client.ENABLE_ENV, "1")
    monkeypatch.setenv(_client.DIR_ENV, str(path))
    monkeypatch.setenv(_client.IDLE_ENV, "120")
    try:
        yield path
    finally:
        killed = _kill_servers(path)
        shutil.rmtree(path, ignore_errors=True)
        left = [pid for pid in killed if not _wait(lambda: not _alive(pid), 10)]  # noqa: B023
        assert left == []


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
            os.kill(pid, signal.SIGKILL)
        killed += found
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


def test_git_merges_through_the_server_equal_the_in_process_driver(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _start_and_wait(folder, tmp_path)
    before = _served(folder)
    results = {}
    for server in (True, False):
        monkeypatch.setenv(_client.ENABLE_ENV, "1" if server else "0")
        for name, sides in (("structural", STRUCTURAL), ("conflict", TRUE_CONFLICT)):
            for line_name, line in (
                ("shell", driver.shell_line()),
                ("fast", f"{driver.fast_command()} %O %A %B %P"),
                ("console", f"{sys.executable} -m fleet_pipelines.cli merge-driver %O %A %B %P"),
            ):
                repo = _new_repo(tmp_path / f"{server}-{name}-{line_name}")
                results[server, name, line_name] = _git_merge(repo, *sides, line)
    assert _served(folder) - before == 6  # each git merge with the server on was served
    for key, (status, merged) in results.items():
        if key[0]:
            assert (status, merged) == results[(False, *key[1:])], key
    assert results[True, "structural", "shell"][0] == 0
    status, merged = results[True, "conflict", "fast"]
    assert status == 1 and b"<<<<<<< HEAD\n" in merged and b">>>>>>> theirs\n" in merged


def test_fixture_merges_through_the_server_are_byte_identical(folder: Path, tmp_path: Path) -> None:
    _start_and_wait(folder, tmp_path)
    cases = sorted(p for p in FIXTURES.iterdir() if (p / "base.py").exists())
    assert len(cases) >= 30
    before = _served(folder)
    for index, case in enumerate(cases):
        sides = [(case / f"{part}.py").read_text() for part in ("base", "ours", "theirs")]
        served = _fast_line(_write(tmp_path / "s" / case.name, *sides), server=True)
        in_pytest = _write(tmp_path / "p" / case.name, *sides)
        status = driver.main([*map(str, in_pytest), "mod.py"], use_server=False)
        assert served[:2] == (status, in_pytest[1].read_bytes()), case.name
        if index % 5 == 0:  # the driver process without the server, stderr too (~0.3 s each)
            here = _fast_line(_write(tmp_path / "h" / case.name, *sides), server=False)
            assert served == here, case.name
    assert _served(folder) - before >= len(cases) // 2  # those where git's lines conflict


def test_the_first_call_starts_the_server_detached_and_still_merges(
    folder: Path, tmp_path: Path
) -> None:
    assert _server_pids(folder) == []
    start = time.monotonic()
    status, merged, _ = _fast_line(_write(tmp_path / "a", BASE, *STRUCTURAL), server=True)
    here = _fast_line(_write(tmp_path / "b", BASE, *STRUCTURAL), server=False)
    assert (status, merged) == here[:2]
    assert time.monotonic() - start < 60  # git's pipes were not held by the server
    assert _wait(lambda: _ready(folder))
    (pid,) = _server_pids(folder)
    # A session of its own (setsid), and not its leader (the second fork): no terminal.
    assert os.getsid(pid) != os.getsid(0) and os.getsid(pid) != pid
    assert pid not in _children(os.getpid())
    assert oct(os.stat(folder).st_mode & 0o777) == "0o700"
    assert oct(os.stat(_socket_path(folder)).st_mode & 0o777) == "0o600"
    assert _fast_line(_write(tmp_path / "c", BASE, *STRUCTURAL), server=True)[:2] == (0, merged)
    assert _served(folder) == 1


def test_only_one_server_starts_for_many_first_calls(folder: Path, tmp_path: Path) -> None:
    env = {**os.environ}
    procs = []
    for index in range(4):
        paths = _write(tmp_path / str(index), BASE, *STRUCTURAL)
        command = [sys.executable, "-S", RUN_DRIVER, *map(str, paths), "mod.py"]
        procs.append(subprocess.Popen(command, env=env, stderr=subprocess.PIPE))
    assert [proc.communicate(timeout=120)[1] for proc in procs] == [b""] * 4
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0]
    assert _wait(lambda: _ready(folder))
    # Two may have been started (each driver saw the lock free); the second one exits at the
    # lock, so one server stays, the one that holds the lock.
    assert _wait(lambda: len(_servers_of(folder)) == 1, 60)
    assert _servers_of(folder) == _server_pids(folder)


def test_two_merges_at_once(folder: Path, tmp_path: Path) -> None:
    _start_and_wait(folder, tmp_path)
    before = _served(folder)
    repos = [_new_repo(tmp_path / f"repo{i}") for i in range(4)]
    for index, repo in enumerate(repos):
        sides = STRUCTURAL if index % 2 == 0 else TRUE_CONFLICT
        commit_branches(repo, BASE, *sides, line=driver.shell_line())
    merges = [
        subprocess.Popen(
            [
                "git",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@fleet.invalid",
                "merge",
                "--no-edit",
                "theirs",
            ],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for repo in repos
    ]
    assert [m.wait(timeout=120) for m in merges] == [0, 1, 0, 1]
    assert _served(folder) - before == 4
    for index, repo in enumerate(repos):
        text = (repo / "mod.py").read_text()
        if index % 2 == 0:
            assert text.startswith("import os\nimport re\nimport sys\n")
        else:
            assert "<<<<<<< HEAD\n" in text and ">>>>>>> theirs\n" in text


def _module(functions: int, edited: int | None, imports: str) -> str:
    """``functions`` small functions; those of parity ``edited`` changed: both sides change
    every other function, so nothing can be set aside and the structural stage takes a while."""
    body = "".join(f"    total += x * {k}\n" for k in range(6))
    parts = [f"import os\n{imports}\n\n"]
    for i in range(functions):
        text = body.replace("* 3\n", f"* {30 + i}\n") if i % 2 == edited else body
        parts.append(f"def f{i}(x):\n    total = 0\n{text}    return total\n\n\n")
    return "".join(parts)


def test_a_server_child_killed_mid_merge_falls_back(folder: Path, tmp_path: Path) -> None:
    server = _start_and_wait(folder, tmp_path)
    base = _module(200, None, "")  # about 1 s in the warm server
    ours, theirs = _module(200, 0, "import re\n"), _module(200, 1, "import sys\n")
    paths = _write(tmp_path / "big", base, ours, theirs)
    env = {**os.environ}
    command = [sys.executable, "-S", RUN_DRIVER, *map(str, paths), "mod.py"]
    client = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, cwd=tmp_path)

    def merging() -> list[int]:  # the child that took the request went to the client's cwd
        return [c for c in _children(server) if _cwd(c) == str(tmp_path)]

    assert _wait(merging, 60)
    (child,) = merging()
    os.kill(child, signal.SIGKILL)
    _, stderr = client.communicate(timeout=300)
    assert (client.returncode, stderr) == (0, b"")
    assert _served(folder) == 0  # the request was never answered
    expected = _fast_line(_write(tmp_path / "ref", base, ours, theirs), server=False)
    assert (0, paths[1].read_bytes()) == expected[:2]
    assert _alive(server)  # one request's crash leaves the server serving
    assert _fast_line(_write(tmp_path / "after", BASE, *STRUCTURAL), server=True)[0] == 0
    assert _served(folder) == 1


def test_a_killed_driver_stops_its_child(folder: Path, tmp_path: Path) -> None:
    server = _start_and_wait(folder, tmp_path)
    base = _module(600, None, "")  # seconds of structural work
    ours, theirs = _module(600, 0, "import re\n"), _module(600, 1, "import sys\n")
    paths = _write(tmp_path / "big", base, ours, theirs)
    command = [sys.executable, "-S", RUN_DRIVER, *map(str, paths), "mod.py"]
    client = subprocess.Popen(command, stderr=subprocess.DEVNULL, cwd=tmp_path)

    def merging() -> list[int]:
        return [c for c in _children(server) if _cwd(c) == str(tmp_path)]

    assert _wait(merging, 60)
    (child,) = merging()
    client.kill()  # as git's ^C would: the merge is abandoned, OURS not written afterwards
    client.wait(timeout=30)
    assert _wait(lambda: not _alive(child), 10)  # the merge takes longer: see _served
    assert _served(folder) == 0

    # As the driver's own process leaves it when killed there: ours, or git's line merge in
    # place (a git it started may finish after it), never the structural stage's result.
    def left_as_killed() -> bool:
        text = paths[1].read_text()
        return text == ours or text.startswith("import os\n<<<<<<< ours\nimport re\n")

    assert _wait(left_as_killed, 10)
    assert _alive(server)


def test_a_server_killed_with_a_request_pending_falls_back(folder: Path, tmp_path: Path) -> None:
    server = _foreground(ROOT, folder)
    try:
        assert _wait(lambda: _ready(folder))
        os.kill(server.pid, signal.SIGSTOP)  # it takes no request now: one waits in its queue
        paths = _write(tmp_path / "a", BASE, *STRUCTURAL)
        command = [sys.executable, "-S", RUN_DRIVER, *map(str, paths), "mod.py"]
        client = subprocess.Popen(command, stderr=subprocess.PIPE)
        # Connected (the stopped server's queue takes it), request sent, waiting for "ready".
        assert _wait(lambda: _has_socket(client.pid), 60)
        time.sleep(0.3)
        assert client.poll() is None
        server.kill()
        _, stderr = client.communicate(timeout=120)
        assert (client.returncode, stderr) == (0, b"")
        expected = _fast_line(_write(tmp_path / "b", BASE, *STRUCTURAL), server=False)
        assert paths[1].read_bytes() == expected[1]
        # Its socket file is left behind: the next driver finds nobody listening, starts a
        # new server (the dead one's lock is free), and merges itself meanwhile.
        assert _socket_path(folder).exists() and not _ready(folder)
        again = _fast_line(_write(tmp_path / "c", BASE, *STRUCTURAL), server=True)
        assert again[:2] == expected[:2]
        assert _wait(lambda: _ready(folder))
        assert _fast_line(_write(tmp_path / "d", BASE, *STRUCTURAL), server=True) == again
        assert _served(folder) == 1
    finally:
        server.kill()
        server.wait(timeout=30)


def _broken_server(path: Path, behaviour: str) -> threading.Thread:
    """A peer on the socket that breaks the protocol: ``close`` hangs up at once, ``garbage``
    answers a byte that is not ``R``, ``die`` says ready and hangs up after ``G``."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        for _ in range(2):  # the test's two merges
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                if behaviour == "garbage":
                    conn.sendall(b"?")
                elif behaviour == "die":
                    conn.sendall(b"R")
                    conn.recv(1)
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("behaviour", ["close", "garbage", "die"])
def test_a_peer_that_breaks_the_protocol_is_not_trusted(
    folder: Path, tmp_path: Path, behaviour: str
) -> None:
    thread = _broken_server(_socket_path(folder), behaviour)
    for name, sides in (("structural", STRUCTURAL), ("conflict", TRUE_CONFLICT)):
        served = _fast_line(_write(tmp_path / f"s-{name}", BASE, *sides), server=True)
        here = _fast_line(_write(tmp_path / f"h-{name}", BASE, *sides), server=False)
        assert served == here
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert _server_pids(folder) == []  # a connection that answered is no reason to start one


def test_a_stale_version_socket_is_not_used(folder: Path, tmp_path: Path) -> None:
    stale_root = tmp_path / "stale"
    (stale_root / "fleet" / "merge").mkdir(parents=True)
    for name in ("__init__.py", "errors.py", "pyast.py"):
        shutil.copy(ROOT / "fleet" / name, stale_root / "fleet" / name)
    for source in (ROOT / "fleet" / "merge").glob("*.py"):
        shutil.copy(source, stale_root / "fleet" / "merge" / source.name)
    driver_copy = stale_root / "fleet" / "merge" / "driver.py"
    driver_copy.write_text(  # an old version that would answer wrongly if it were used
        driver_copy.read_text()
        + "\n\ndef main(argv, *, use_server=True):  # noqa\n"
        + "    open(argv[1], 'w').write('stale\\n')\n    return 0\n"
    )
    stale_folder = Path(tempfile.mkdtemp(prefix="fms-stale-", dir="/tmp"))
    server = _foreground(stale_root, stale_folder)
    try:
        assert _wait(lambda: list(stale_folder.glob("*.sock")), 60)
        (stale_sock,) = stale_folder.glob("*.sock")
        assert _client.code_key(str(stale_root)) != _client.code_key()
        os.rename(stale_sock, _socket_path(folder))  # where this code's server would listen
        assert _ready(folder)
        served = _fast_line(_write(tmp_path / "a", BASE, *STRUCTURAL), server=True)
        here = _fast_line(_write(tmp_path / "b", BASE, *STRUCTURAL), server=False)
        assert served == here and served[1] != b"stale\n"
        assert _served(stale_folder) == 0
        logs = "".join(log.read_text() for log in stale_folder.glob("*.log"))
        assert logs.count("refused a 'merge' request: another version of the code") == 1
    finally:
        server.kill()
        server.wait(timeout=30)
        shutil.rmtree(stale_folder, ignore_errors=True)


def test_the_code_key_follows_the_sources(tmp_path: Path) -> None:
    root = tmp_path / "copy"
    shutil.copytree(ROOT / "fleet" / "merge", root / "fleet" / "merge")
    for name in ("__init__.py", "errors.py", "pyast.py"):
        shutil.copy(ROOT / "fleet" / name, root / "fleet" / name)
    key = _client.code_key(str(root))
    assert _client.code_key(str(root)) == key
    source = root / "fleet" / "merge" / "_merge3.py"
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 1))
    assert _client.code_key(str(root)) != key
    assert _client.paths("/x", key)[0] != _client.paths("/x", _client.code_key(str(root)))[0]


def test_the_server_exits_after_its_idle_timeout(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(_client.IDLE_ENV, "2")
    pid = _start_and_wait(folder, tmp_path)
    assert _wait(lambda: not _alive(pid), 60)
    assert not _socket_path(folder).exists()
    assert "idle for 2 s" in "".join(log.read_text() for log in folder.glob("*.log"))


def test_stop_server_stops_it(folder: Path, tmp_path: Path) -> None:
    pid = _start_and_wait(folder, tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", "merge-driver", "--stop-server"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "stopped 1 merge server" in proc.stdout, proc.stderr
    assert _wait(lambda: not _alive(pid), 30)
    assert not _socket_path(folder).exists()


def test_disabled_by_the_environment(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for value in ("0", "off"):
        monkeypatch.setenv(_client.ENABLE_ENV, value)
        env = {**os.environ}
        paths = _write(tmp_path / value, BASE, *STRUCTURAL)
        command = [sys.executable, "-S", RUN_DRIVER, *map(str, paths), "mod.py"]
        assert subprocess.run(command, env=env, timeout=120).returncode == 0
    time.sleep(0.5)
    assert list(folder.iterdir()) == []


def test_a_server_that_cannot_warm_up_holds_back_new_starts(tmp_path: Path) -> None:
    broken_root = tmp_path / "broken"
    (broken_root / "fleet" / "merge").mkdir(parents=True)
    for name in ("__init__.py", "errors.py", "pyast.py"):
        shutil.copy(ROOT / "fleet" / name, broken_root / "fleet" / name)
    for source in (ROOT / "fleet" / "merge").glob("*.py"):
        shutil.copy(source, broken_root / "fleet" / "merge" / source.name)
    (broken_root / "fleet" / "merge" / "driver.py").write_text("def main(:\n")  # cannot import
    folder = Path(tempfile.mkdtemp(prefix="fms-broken-", dir="/tmp"))
    folder.chmod(0o700)
    server = _foreground(broken_root, folder, idle=3)
    try:
        key = _client.code_key(str(broken_root))
        sock_path, _, log_path = map(Path, _client.paths(str(folder), key))

        def failed() -> bool:
            return log_path.exists() and "warm-up failed" in log_path.read_text()

        assert _wait(failed, 60)
        assert not sock_path.exists()
        assert _client.start_server(key, str(folder)) is False  # the lock is held: no new start
        assert server.wait(timeout=60) == 1  # after its idle time
    finally:
        server.kill()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
