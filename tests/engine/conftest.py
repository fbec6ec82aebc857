"""Services the engine tests start themselves, on loopback, ended by the PID they started:
``git daemon`` serving bare remotes."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import git


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str,
                  timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{what} did not start (exit {proc.poll()})") from None
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
    port = free_port()
    args = ["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}",
            f"--base-path={base}", "--export-all"]
    if push:
        args.append("--enable=receive-pack")
    proc = subprocess.Popen([*args, str(base)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_for_port(port, proc, "git daemon")
    return GitDaemon(base, port, proc)


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
