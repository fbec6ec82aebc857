"""The warm merge server (``fleet.merge._server``) behind the driver, with real processes: the
driver's fast line and shell line run by real ``git merge``s, a real server started detached by
the driver or in the foreground by the test, each test with its own socket directory. Every
process a test starts is stopped by its PID (checked against its command line) at the end."""



import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from fleet.merge import _client, driver
from tests.unit.merge._branches import commit_branches
from tests.unit.merge._server_support import (
    BASE,
    FIXTURES,
    ROOT,
    RUN_DRIVER,
    STRUCTURAL,
    TRUE_CONFLICT,
    _alive,
    _children,
    _fast_line,
    _foreground,
    _git_merge,
    _new_repo,
    _ready,
    _served,
    _server_pids,
    _servers_of,
    _socket_path,
    _start_and_wait,
    _wait,
    _write,
)


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
    # lock, so one server stays, the one that holds the lock. A detached server still booting
    # when the drivers have ended shows up late and then exits: one server, for 2 s running.
    def one_server() -> bool:
        return len(_servers_of(folder)) == 1 and _servers_of(folder) == _server_pids(folder)

    assert _wait(lambda: one_server() and not _wait(lambda: not one_server(), 2), 60)


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
