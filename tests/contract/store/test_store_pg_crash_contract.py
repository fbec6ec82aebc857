"""A PostgreSQL server crash under asynchronously committed grants and releases.

A private PostgreSQL cluster (initdb into a temporary directory, default settings, a free port on
127.0.0.1, its socket in the same directory: the shared cluster is never touched) serves 8
processes that acquire and release hierarchical leases as fast as they can; the server is stopped
with ``pg_ctl stop -m immediate`` (no checkpoint, unwritten WAL lost: what a crash loses) at a
random moment, restarted, and what the clients were told is checked against what survived:

- no two conflicting leases are live after recovery;
- no fencing token is ever issued twice, and every token issued after recovery is above every
  token any client received before the crash (the epoch advanced by exactly one);
- a grant the clients were told about but that the crash lost is refused by ``check_fence``,
  also after a later read lease on the same symbol, and its lease is not live;
- a grant that survived keeps its lease, its fence, and a valid fencing token;
- a release that was lost puts the lease back with its holder and token (it expires by TTL).

A clean restart afterwards keeps the epoch, and the surviving tokens stay valid.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fleet.store import open_store
from fleet.store._leases import conflicts
from fleet.store.stress import hierarchical_pool
from fleet.types import Acquired, LeaseRequest
from tests._reaper import Reaper, reap_with_owner

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROUNDS = 3
WORKERS = 8
Told = tuple[str, str, str, int]  # a grant as its holder was told it: holder, symbol, mode, token


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    """A private PostgreSQL cluster, run as the ``postgres`` OS user when we are root."""

    bindir: Path
    root: Path
    port: int
    # stops the running server and removes ``root`` if this process dies without destroy()
    reaper: Reaper | None = None

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run(
            [*prefix, *argv], check=check, capture_output=True, text=True, timeout=120
        )

    def initdb(self) -> None:
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root}"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "-l",
            str(self.root / "server.log"),
            "start",
        )
        if self.reaper is not None:
            self.reaper.cancel()
        pid = self.postmaster_pid()
        assert pid is not None, "pg_ctl started no postmaster"
        self.reaper = reap_with_owner(pid, signal.SIGQUIT, remove=self.root)

    def stop(self, mode: str) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def destroy(self) -> None:
        """Stop the server whatever state it is in (immediate: nothing to keep), then remove."""
        if self.reaper is not None:
            self.reaper.cancel()
        if self.postmaster_pid() is not None:
            self._run(
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "stop",
                check=False,
            )
        pid = self.postmaster_pid()
        if pid is not None:  # pg_ctl failed: end the postmaster by its own PID
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def private_pg() -> Iterator[Cluster]:
    bindir = _bindir()
    if bindir is None or (shutil.which("runuser") is None and os.geteuid() == 0):
        pytest.skip("PostgreSQL server binaries are not installed")
    # Not under tmp_path: pytest makes its base directory 0700 for root, and the server runs as
    # the postgres user, which must reach its data directory.
    root = Path(tempfile.mkdtemp(prefix="fleet-pgcrash-"))
    cluster = Cluster(bindir, root, _free_port())
    try:
        if os.geteuid() == 0:
            shutil.chown(root, "postgres", "postgres")
        cluster.initdb()
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


def _run_round(cluster: Cluster, pool: list[str], name: str, rng: random.Random) -> list[list[str]]:
    """Start the churning workers, crash the server under them, return what each printed."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fleet.store.stress",
                "churn",
                "--url",
                cluster.dsn,
                "--holder",
                f"{name}w{n}",
                "--pool",
                json.dumps(pool),
                "--seed",
                str(rng.randrange(1 << 30)),
                "--hold",  # half of the workers hold their grants a little: some are in flight
                "0.01" if n % 2 else "0",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(WORKERS)
    ]
    try:
        for p in procs:  # every worker is connected (starting Python takes a while under load)
            assert p.stdout is not None
            assert "ready" in json.loads(p.stdout.readline() or "{}")
        time.sleep(rng.uniform(1.0, 2.0))
        cluster.stop("immediate")
        # each worker prints its error and exits; read through the same buffered pipe
        outputs = [p.stdout.read().splitlines() for p in procs if p.stdout is not None]
        assert [p.wait(60) for p in procs] == [0] * WORKERS
        return outputs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if p.stdout is not None:
                p.stdout.close()


def test_server_crash_keeps_leases_and_fencing_safe(private_pg: Cluster) -> None:
    pool = hierarchical_pool(6, 3, 2)
    open_store(private_pg.dsn).close()
    tokens_seen: set[int] = set()  # every token any client received, over all rounds
    totals = {"grants": 0, "releases": 0, "lost_grants": 0, "lost_releases": 0}
    epoch = 1
    rng = random.Random()
    for round_no in range(ROUNDS):
        outputs = _run_round(private_pg, pool, f"r{round_no}", rng)
        private_pg.start()

        granted: dict[str, Told] = {}  # lease id -> what its holder was told
        released: set[str] = set()
        for n, lines in enumerate(outputs):
            holder = f"r{round_no}w{n}"
            assert lines and "error" in json.loads(lines[-1]), f"{holder} did not see the crash"
            for line in lines:
                event = json.loads(line)
                for lease_id, symbol, mode, token in event.get("g", []):
                    assert token not in tokens_seen, f"token {token} issued twice"
                    assert token >> 40 == epoch, (token, epoch)
                    tokens_seen.add(token)
                    granted[str(lease_id)] = (holder, symbol, mode, token)
                released.update(event.get("r", []))
        assert granted, f"the workers acquired nothing before the crash: {outputs}"

        with open_store(private_pg.dsn, migrate=False) as store:
            live = store.leases.held()
            # no two conflicting leases are live after recovery
            for i, a in enumerate(live):
                for b in live[i + 1 :]:
                    assert a.holder == b.holder or not conflicts(
                        a.symbol, a.mode, b.symbol, b.mode
                    ), (a, b)
            with store.db.read() as tx:
                fences = {r["symbol"]: r["token"] for r in tx.raw(SQL_FENCES)}
            for grant in live:
                if grant.lease_id in granted:  # (a grant whose reply the crash cut is live too)
                    assert granted[grant.lease_id] == (
                        grant.holder,
                        grant.symbol,
                        grant.mode,
                        grant.token,
                    )
                # a surviving lease keeps its fence and a valid fencing token
                assert fences.get(grant.symbol, 0) >= grant.token
                assert store.leases.check_fence(grant.symbol, grant.token), grant
            live_ids = {g.lease_id for g in live}
            # A grant is durable iff its fence (upserted in the same transaction, never lowered)
            # reached its token: a later durable grant on the symbol implies this one (WAL
            # prefix; the symbol's advisory lock ordered their commits).
            lost = [g for g in granted.values() if fences.get(g[1], 0) < g[3]]
            assert not {i for i, g in granted.items() if g in lost} & live_ids
            gone = [g for i, g in granted.items() if i not in live_ids and g not in lost]
            totals["grants"] += len(granted)
            totals["releases"] += len(released)
            totals["lost_grants"] += len(lost)
            totals["lost_releases"] += len(released & live_ids)

            # a lost grant is refused before the epoch advances, and so is a pre-crash token
            # whose lease is no longer live (released: the store cannot tell it from a lost one)
            for _, symbol, _, token in lost + rng.sample(gone, min(len(gone), 100)):
                assert not store.leases.check_fence(symbol, token), (symbol, token)
            # ... the first acquisition after recovery advances it: every new token is above
            # every token issued before the crash ...
            first = store.leases.try_acquire(
                "probe", "u", [LeaseRequest(f"probe{round_no}.py::P", "write")], 60
            )
            assert isinstance(first, Acquired)
            epoch += 1
            new = list(first.grants)
            # ... and a lost grant stays refused after a later read lease on its symbol
            for _, symbol, _, token in lost:
                read = store.leases.try_acquire("reader", "u", [LeaseRequest(symbol, "read")], 60)
                new.extend(read.grants if isinstance(read, Acquired) else ())
                assert not store.leases.check_fence(symbol, token), (symbol, token)
            for grant in new:
                assert grant.token >> 40 == epoch and grant.token > max(tokens_seen), grant
                tokens_seen.add(grant.token)
            store.leases.release("probe")
            store.leases.release("reader")

    assert totals["grants"] > 100, totals
    # A clean restart keeps the epoch (it loses nothing acknowledged) and live tokens valid.
    with open_store(private_pg.dsn, migrate=False) as store:
        kept = store.leases.try_acquire("clean", "u", [LeaseRequest("clean.py::K", "write")], 600)
        assert isinstance(kept, Acquired)
    private_pg.stop("fast")
    private_pg.start()
    with open_store(private_pg.dsn, migrate=False) as store:
        assert store.leases.check_fence("clean.py::K", kept.grants[0].token)
        again = store.leases.try_acquire("clean2", "u", [LeaseRequest("o.py::O", "write")], 60)
        assert isinstance(again, Acquired) and again.grants[0].token >> 40 == epoch
    print(f"server crashes: {ROUNDS}, {totals}")


SQL_FENCES = "SELECT symbol, token FROM lease_fences"
