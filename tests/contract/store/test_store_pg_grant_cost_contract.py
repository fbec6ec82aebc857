"""What keeps a PostgreSQL grant cheap (migration 0005; docs/store.md, "Server cost per grant"):
the lease functions stay index probes whatever the table looked like when their plans were made,
and every fourth acquisition commits synchronously so that the asynchronous ones around it do not
wake the WAL writer one by one."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from fleet.store import open_store
from fleet.types import Acquired, LeaseRequest

pytestmark = pytest.mark.postgres

SEQ_MASK = (1 << 40) - 1  # a token is (epoch << 40) + the fence sequence number


def _flush_stats(conn: psycopg.Connection[Any]) -> None:
    """Make the backend of ``conn`` publish its table statistics before it answers again."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.execute("SELECT 1")


def _seq_scans(dsn: str, table: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT seq_scan FROM pg_stat_user_tables WHERE relname = %s", (table,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_grants_and_releases_never_scan_the_lease_table(pg_dsn: str) -> None:
    # A lease table that (auto)vacuum has just found nearly empty is where the planner preferred
    # a sequential scan for the conflict check and the release (two per grant before migration
    # 0005); once planned, that scan read every page of the growing table, dead tuples included,
    # on every grant until autovacuum came round again.
    with open_store(pg_dsn) as store:
        for n in range(10):
            got = store.leases.try_acquire("h", "u", [LeaseRequest(f"w{n}.py::C", "write")], 60)
            assert isinstance(got, Acquired)
            store.leases.release("h", [g.lease_id for g in got.grants])
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute("VACUUM leases")  # cached plans are made again, against a tiny table
        with store.db.connection() as conn:  # type: ignore[attr-defined]
            _flush_stats(conn)
        before = _seq_scans(pg_dsn, "leases")
        for n in range(120):
            requests = [LeaseRequest(f"pkg/m{n % 7}.py::C{n}", "write")]
            if n % 3 == 0:  # a read lease beside it, and a hierarchical pair (two lease ids)
                requests.append(LeaseRequest(f"pkg/m{n % 7}.py::D{n}", "read"))
            got = store.leases.try_acquire(f"h{n % 2}", "u", requests, 60)
            assert isinstance(got, Acquired)
            released = store.leases.release(f"h{n % 2}", [g.lease_id for g in got.grants])
            assert released == len(requests)
        blocked = store.leases.try_acquire("a", "u", [LeaseRequest("pkg/x.py::K", "write")], 60)
        assert isinstance(blocked, Acquired)
        refused = store.leases.try_acquire("b", "u", [LeaseRequest("pkg/x.py", "write")], 60)
        assert not isinstance(refused, Acquired)
        assert store.leases.release("a") == 1
        with store.db.connection() as conn:  # type: ignore[attr-defined]
            _flush_stats(conn)
        assert _seq_scans(pg_dsn, "leases") == before


def test_every_fourth_acquisition_commits_synchronously(pg_dsn: str) -> None:
    with open_store(pg_dsn):
        pass
    seen: set[str] = set()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
        for n in range(9):
            symbols = [f"m{n}.py::A"] if n % 2 else [f"m{n}.py::A", f"m{n}.py::A.b"]
            with conn.transaction():
                rows = conn.execute(
                    "SELECT ok, token FROM fleet_lease_acquire('h', 'u', %s, %s, 60)",
                    (symbols, ["write"] * len(symbols)),
                ).fetchall()
                assert [ok for ok, _ in rows] == [True] * len(symbols)
                last_seq = max(token for _, token in rows) & SEQ_MASK
                mode = conn.execute("SHOW synchronous_commit").fetchone()
                assert mode == ("on" if last_seq % 4 == 0 else "off",), (symbols, last_seq)
                seen.add(mode[0] if mode else "")
                raise psycopg.Rollback()  # sequence numbers are used up all the same
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
    assert seen == {"on", "off"}
