"""Services the engine tests start themselves, on loopback, ended by the PID they started:
``git daemon`` serving bare remotes."""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git

# Ports for the services the tests start are reserved below the kernel's ephemeral range (so no
# port the kernel hands out - another test's probe, a client connection - is one of them), each
# under a lock file here held by the reserving process until it releases the port or exits:
# two deployments on one machine (pytest -n 2, a benchmark beside the tests) never pick one port.
PORT_LOCKS = Path("/tmp/fleet-test-ports")
PORT_RANGE = (20000, 32000)
_held: dict[int, int] = {}  # port -> the descriptor of its lock file


def _ephemeral() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A loopback port reserved for this process (:data:`PORT_LOCKS`): free now, outside the
    ephemeral range, and handed to no other process that reserves ports until
    :func:`release_port` or this process's exit. A service started on it must still be checked
    to be the one listening (:func:`wait_for_port`)."""
    low, high = _ephemeral()
    candidates = [p for p in range(*PORT_RANGE) if not low <= p <= high and p not in _held]
    PORT_LOCKS.mkdir(parents=True, exist_ok=True)
    for port in random.sample(candidates, len(candidates)):
        fd = os.open(PORT_LOCKS / f"{port}.lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:  # in use by something that does not reserve ports
                os.close(fd)
                continue
        _held[port] = fd
        return port
    raise RuntimeError(f"no free port in {PORT_RANGE} to reserve")


def release_port(port: int) -> None:
    fd = _held.pop(port, None)
    if fd is not None:
        os.close(fd)


def listeners(port: int) -> set[int]:
    """The socket inodes listening on 127.0.0.1:``port`` (or on any address), from
    /proc/net/tcp."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        address, state, inode = fields[1], fields[3], int(fields[9])
        host, hexport = address.split(":")
        if state == "0A" and int(hexport, 16) == port and host in ("0100007F", "00000000"):
            found.add(inode)
    return found


def sockets_of(pid: int) -> set[int]:
    """The socket inodes process ``pid`` and its descendants hold."""
    found: set[int] = set()
    pending = [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{current}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{current}/fd/{fd}")
                    if target.startswith("socket:["):
                        found.add(int(target[8:-1]))
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{current}/task"):
                children = Path(f"/proc/{current}/task/{task}/children").read_text()
                pending.extend(int(c) for c in children.split())
    return found


def wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str,
                  timeout_s: float = 30.0) -> None:
    """Wait until ``proc`` (or a process it started) listens on ``port`` and accepts a
    connection. A listener that is some other process's (the port taken between its
    reservation and ``proc``'s bind) never passes for ours: ``proc`` failing to bind then fails
    here, saying so."""
    deadline = time.monotonic() + timeout_s
    while True:
        held = listeners(port)
        if held and held & sockets_of(proc.pid):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return
            except OSError:
                pass
        if proc.poll() is not None or time.monotonic() > deadline:
            other = " (another process listens on it)" if held else ""  # (not ours)
            raise AssertionError(f"{what} did not start on port {port}{other} "
                                 f"(exit {proc.poll()})")
        time.sleep(0.05)


@dataclass
class GitDaemon:
    base: Path
    port: int
    proc: subprocess.Popen[bytes]

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def bare_from(self, repo: Path, name: str) -> Path:
        """A bare copy of ``repo`` served as ``name``."""
        bare = self.base / name
        subprocess.run(["git", "clone", "--quiet", "--bare", str(repo), str(bare)], check=True)
        return bare


def start_git_daemon(base: Path, *, push: bool = True) -> GitDaemon:
    base.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):  # a port taken by a process that reserves none: another port
        port = free_port()
        args = ["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}",
                f"--base-path={base}", "--export-all"]
        if push:
            args.append("--enable=receive-pack")
        proc = subprocess.Popen([*args, str(base)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port, proc, "git daemon")
        except AssertionError:
            stop(proc)
            release_port(port)
            if attempt == 2:
                raise
            continue
        return GitDaemon(base, port, proc)
    raise AssertionError("unreachable")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def git_daemon(tmp_path: Path) -> Iterator[GitDaemon]:
    daemon = start_git_daemon(tmp_path / "served")
    try:
        yield daemon
    finally:
        stop(daemon.proc)
        release_port(daemon.port)


@pytest.fixture
def served_repo(git_repo: Path, git_daemon: GitDaemon) -> str:
    """``git_repo`` with one commit, served over ``git://`` on loopback; its URL."""
    (git_repo / "a.py").write_text("A = 1\n")
    git(git_repo, "add", "a.py")
    git(git_repo, "commit", "-q", "-m", "a")
    git_daemon.bare_from(git_repo, "target.git")
    return git_daemon.url("target.git")


@pytest.fixture
def second_pg_dsn(pg_admin_dsn: str, pg_template: str) -> Iterator[str]:
    """One more fresh database beside ``pg_dsn`` (Dagster's storage beside the fleet store)."""
    from tests._pgcluster import throwaway_database

    with throwaway_database(pg_admin_dsn, "fleet_d_", template=pg_template) as dsn:
        yield dsn


def pg_url(dsn: str, scheme: str = "postgresql") -> str:
    """A libpq DSN as a URL: ``postgresql://`` for the fleet store, ``postgresql+psycopg2://``
    for dagster-postgres (deploy/dagster.yaml)."""
    from psycopg.conninfo import conninfo_to_dict

    p = conninfo_to_dict(dsn)
    return (f"{scheme}://{p.get('user', '')}:{p.get('password', '')}@{p.get('host', '')}:"
            f"{p.get('port', 5432)}/{p['dbname']}")


@contextlib.contextmanager
def embedded_engine(tmp_path: Path, repo: Path, say: Callable[[str], None] = print,
                    campaigns: str = "yaml-safe-load") -> Iterator[tuple[Any, Any, Any]]:
    """``(settings, instance, engine)``: fleet settings on ``repo`` under ``tmp_path/fleet``,
    the embedded instance under ``tmp_path/dagster`` configured as ``fleet sweep`` configures
    it (run queue, monitoring, retries), and a submitting engine on it (no daemon yet)."""
    from fleet_pipelines.commands._sweep import instance_for
    from fleet_pipelines.engine import ensure_run_queue, submitting
    from fleet_pipelines.resources import FleetSettings
    from fleet_pipelines.storage import ensure_instance_config

    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "fleet"),
                                       "FLEET_REPO": str(repo), "FLEET_CAMPAIGNS": campaigns})
    settings.save()

    def prepare(home: Path) -> None:
        ensure_instance_config(home)
        ensure_run_queue(home)

    with instance_for(tmp_path / "dagster", prepare) as instance, \
            submitting(instance, settings.env(), say) as engine:
        yield settings, instance, engine
