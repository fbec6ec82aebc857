"""The warm merge server's faults, with real processes (test_merge_server.py has the rest):
a child killed mid-merge, a killed driver, a server killed with a request pending, a peer that
breaks the protocol, a socket of another version: the driver merges in its own process, the
same result, never a silent "ours"."""


import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from fleet.merge import _client
from tests.unit.merge._server_support import (
    BASE,
    ROOT,
    RUN_DRIVER,
    STRUCTURAL,
    TRUE_CONFLICT,
    _alive,
    _children,
    _cwd,
    _fast_line,
    _foreground,
    _has_socket,
    _ready,
    _served,
    _server_pids,
    _socket_path,
    _start_and_wait,
    _wait,
    _write,
)


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




def test_the_socket_path_appears_only_once_the_server_listens(folder: Path) -> None:
    """The server binds under a name of its own and moves the socket into place once it
    listens (under load, a driver that found the path between bind and listen was refused and
    merged in its own process); a name a killed server left behind is removed."""
    sock = _socket_path(folder)
    left = Path(f"{sock}.99999999")
    left.write_text("")  # what a server killed between its bind and its rename leaves
    server = _foreground(ROOT, folder)
    try:
        refused = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if sock.exists():
                probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    probe.connect(str(sock))
                    break
                except ConnectionRefusedError:
                    refused += 1
                finally:
                    probe.close()
            time.sleep(0.001)
        else:
            raise AssertionError("the server never listened")
        assert refused == 0
        assert not left.exists()
        assert sorted(p.name for p in folder.iterdir() if ".sock" in p.name) == [sock.name]
    finally:
        server.kill()
        server.wait(timeout=30)
