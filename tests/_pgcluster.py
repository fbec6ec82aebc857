"""A throwaway PostgreSQL cluster for the test session, from the installed server binaries.

``initdb`` into a temporary directory (as the ``postgres`` OS user, else ``nobody``, when the
tests run as root: the server refuses to run as root), ``pg_ctl start`` on a free loopback port
with its socket in the same directory, so it never touches a system cluster. Settings for a test
server only: no fsync (nothing here must survive an OS crash; ``synchronous_commit`` keeps its
default, which tests check). Under pytest-xdist every worker process starts its own cluster (a
free port each, retried if another worker took it first).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests._reaper import Reaper, reap_with_owner

SETTINGS = ("-c fsync=off -c full_page_writes=off "
            "-c max_connections=300 -c shared_buffers=32MB")


def server_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<v>/bin`` that has ``initdb`` (Debian's layout), else
    the directory of an ``initdb`` on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _run_as() -> str | None:
    """The unprivileged user the server runs as when we are root (``None``: ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and neither a `postgres` nor a `nobody` user exists")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ThrowawayCluster:
    bindir: Path
    root: Path
    user: str | None
    port: int = 0
    reaper: Reaper | None = None

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        return subprocess.run([*prefix, *argv], check=check, capture_output=True, text=True,
                              timeout=120)

    def start(self) -> None:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust",
                  "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C")
        last = ""
        for _ in range(5):  # another worker may bind the port between our probe and the start
            self.port = _free_port()
            options = (f"-p {self.port} -c listen_addresses=127.0.0.1 "
                       f"-c unix_socket_directories={self.root} {SETTINGS}")
            done = self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options,
                             "-w", "-t", "60", "-l", str(self.root / "server.log"), "start",
                             check=False)
            if done.returncode == 0:
                # stopped (immediate shutdown) and removed even if this process dies without
                # its teardown (Ctrl-C, a killed xdist worker)
                pid = int((self.data / "postmaster.pid").read_text().split()[0])
                self.reaper = reap_with_owner(pid, signal.SIGQUIT, remove=self.root)
                return
            last = (self.root / "server.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"the throwaway PostgreSQL cluster in {self.root} did not start:\n"
                           f"{last}")

    def destroy(self) -> None:
        if self.reaper is not None:
            self.reaper.cancel()
        pidfile = self.data / "postmaster.pid"
        if pidfile.exists():
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                      "-w", "stop", check=False)
        with contextlib.suppress(OSError, ValueError, IndexError, ProcessLookupError):
            os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)  # pg_ctl failed
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster() -> ThrowawayCluster:
    """Start a cluster; the caller destroys it. ``RuntimeError`` with the reason if it cannot."""
    bindir = server_bindir()
    if bindir is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb): run scripts/ensure-deps "
                           "test, or set FLEET_TEST_PG_DSN to a server's DSN")
    user = _run_as()
    # Not under pytest's tmp_path: for root pytest makes it 0700, and the server's user must
    # reach its data directory.
    root = Path(tempfile.mkdtemp(prefix="fleet-testpg-"))
    if user:
        shutil.chown(root, user)
    cluster = ThrowawayCluster(bindir, root, user)
    try:
        cluster.start()
    except BaseException:
        cluster.destroy()
        raise
    return cluster


@contextlib.contextmanager
def throwaway_database(admin_dsn: str, prefix: str, template: str | None = None) -> Iterator[str]:
    """A new database (named ``prefix`` + a random suffix; a clone of ``template`` if given) on
    ``admin_dsn``'s server: its DSN, the database dropped afterwards."""
    import uuid

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"{prefix}{uuid.uuid4().hex[:12]}"
    clone = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{clone}')
    params = conninfo_to_dict(admin_dsn)
    params["dbname"] = name
    try:
        yield make_conninfo(**params)  # type: ignore[arg-type]
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
