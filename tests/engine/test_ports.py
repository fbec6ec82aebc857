"""The services the engine and distributed tests start get ports no other deployment on the
machine gets (reserved under a lock per port, outside the ephemeral range), and a service counts
as started only when the listener on its port is its own: a Redis that lost its port to another
deployment's fails to start instead of handing its workers the other deployment's broker."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.distributed._cluster import REDIS, Redis
from tests.engine.conftest import _ephemeral, free_port, release_port, start_git_daemon, stop

ROOT = Path(__file__).resolve().parents[2]
HOLDER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from tests.engine.conftest import free_port
    print(" ".join(str(free_port()) for _ in range(40)), flush=True)
    sys.stdin.read()  # held until the test closes stdin
""")


def test_processes_reserving_at_once_never_get_one_port() -> None:
    holders = [subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True) for _ in range(4)]
    try:
        ports = [int(p) for h in holders for p in (h.stdout.readline() if h.stdout else "").split()]
        mine = free_port()  # (and this process beside them)
        release_port(mine)
    finally:
        for h in holders:
            h.communicate("")
    low, high = _ephemeral()
    assert len(ports) == 160 and len(set([*ports, mine])) == 161
    assert not any(low <= p <= high for p in ports)
    # released by its holder's exit: reservable again
    again = free_port()
    release_port(again)


def test_a_service_whose_port_another_process_listens_on_does_not_start(
        tmp_path: Path) -> None:
    port = free_port()
    other = socket.socket()  # another deployment's broker, started first on the same port
    other.bind(("127.0.0.1", port))
    other.listen()
    try:
        redis = Redis(port, tmp_path / "redis")
        try:
            redis.start()
        except AssertionError as refused:
            assert f"redis-server did not start on port {port} (another process listens " \
                   "on it)" in str(refused)
        else:
            raise AssertionError("a Redis that could not bind passed for started")
        finally:
            redis.stop()
    finally:
        other.close()
        release_port(port)
    assert Path(REDIS).exists()


def test_a_service_on_its_own_port_starts(tmp_path: Path) -> None:
    redis = Redis(free_port(), tmp_path / "redis")
    redis.start()
    try:
        with socket.create_connection(("127.0.0.1", redis.port), timeout=5) as conn:
            conn.sendall(b"PING\r\n")
            assert conn.recv(16) == b"+PONG\r\n"
    finally:
        redis.stop()
        release_port(redis.port)
    daemon = start_git_daemon(tmp_path / "served")
    stop(daemon.proc)
    release_port(daemon.port)
