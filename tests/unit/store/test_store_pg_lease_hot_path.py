"""The PostgreSQL lease hot path: numbered SQL for statements prepared on libpq, and grants and
releases that commit asynchronously in their own transactions only (the server default and every
other write stay synchronous)."""

from __future__ import annotations

import pytest

from fleet.store._pghot import numbered
from fleet.types import Acquired, LeaseRequest


def test_numbered_keeps_the_parameter_order() -> None:
    sql = "SELECT f(%(holder)s, %(ids)s::bigint[]) AS n"
    assert numbered(sql, ("holder", "ids")) == "SELECT f($1, $2::bigint[]) AS n"
    with pytest.raises(ValueError, match="expected parameters"):
        numbered(sql, ("ids", "holder"))
    with pytest.raises(ValueError, match="expected parameters"):
        numbered("SELECT %(a)s + %(a)s", ("a",))


@pytest.mark.postgres
def test_grant_and_release_are_asynchronous_for_their_own_transaction_only(pg_dsn: str) -> None:
    import psycopg

    from fleet.store import open_store

    with open_store(pg_dsn) as store:
        got = store.leases.try_acquire("a", "u", [LeaseRequest("m.py::A", "write")], 60)
        assert isinstance(got, Acquired)
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
            with conn.transaction():
                row = conn.execute("SELECT fleet_lease_release('a', NULL)").fetchone()
                assert row == (1,)
                assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)
                raise psycopg.Rollback()
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
            with conn.transaction():
                rows = conn.execute(
                    "SELECT ok FROM fleet_lease_acquire('b', 'u', ARRAY['n.py::B'], "
                    "ARRAY['write'], 60)"
                ).fetchall()
                assert rows == [(True,)]
                assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)
                raise psycopg.Rollback()
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
        # the rolled-back release changed nothing; the store's own release deletes it
        assert [g.symbol for g in store.leases.held(holder="a")] == ["m.py::A"]
        assert store.leases.release("a", [got.grants[0].lease_id, "999999"]) == 1
        assert store.leases.release("a", [got.grants[0].lease_id]) == 0
        assert store.leases.held() == []


@pytest.mark.postgres
def test_tokens_carry_the_epoch_and_symbols_refuse_the_separator(pg_dsn: str) -> None:
    from fleet.store import open_store

    with open_store(pg_dsn) as store:
        got = store.leases.try_acquire("a", "u", [LeaseRequest("m.py::A", "write")], 60)
        assert isinstance(got, Acquired)
        assert got.grants[0].token >> 40 == 1  # epoch 1 of a fresh database
        with pytest.raises(ValueError, match="U\\+001F"):
            store.leases.try_acquire("a", "u", [LeaseRequest("m.py::A\x1fB", "write")], 60)


@pytest.mark.postgres
def test_after_a_crash_lost_grants_stay_fenced_off_and_the_epoch_advances_once(
    pg_dsn: str,
) -> None:
    """What a crash leaves, made exactly: a grant whose asynchronous commit never reached the
    WAL is a rolled-back grant (its sequence value is used, its rows are not there), and crash
    recovery empties the unlogged ``lease_epoch_live``. The real crash runs in
    tests/contract/store/test_store_pg_crash_contract.py on a private cluster."""
    import threading

    import psycopg

    from fleet.store import open_store

    with open_store(pg_dsn) as store, psycopg.connect(pg_dsn, autocommit=True) as conn:
        leases = store.leases
        kept = leases.try_acquire("a", "u", [LeaseRequest("k.py::K", "write")], 600)
        gone = leases.try_acquire("b", "u", [LeaseRequest("g.py::G", "write")], 600)
        assert isinstance(kept, Acquired) and isinstance(gone, Acquired)
        assert leases.release("b") == 1
        with conn.transaction():
            row = conn.execute(
                "SELECT token FROM fleet_lease_acquire('c', 'u', ARRAY['l.py::L'], "
                "ARRAY['write'], 600)"
            ).fetchone()
            assert row is not None
            lost_token = int(row[0])
            raise psycopg.Rollback()
        (kept_grant,), (gone_grant,) = kept.grants, gone.grants
        assert leases.check_fence("g.py::G", gone_grant.token)  # released, nobody wrote since
        conn.execute("TRUNCATE lease_epoch_live")  # what crash recovery does to it

        # before the epoch advances: only live leases keep pre-crash tokens valid
        assert leases.check_fence("k.py::K", kept_grant.token)
        assert not leases.check_fence("l.py::L", lost_token)
        assert not leases.check_fence("g.py::G", gone_grant.token)
        # the first acquisition advances the epoch; a later read lease on the lost grant's
        # symbol does not make its token valid again
        read = leases.try_acquire("d", "u", [LeaseRequest("l.py::L", "read")], 600)
        assert isinstance(read, Acquired)
        (read_grant,) = read.grants
        assert read_grant.token >> 40 == 2 and read_grant.token > lost_token
        assert leases.check_fence("l.py::L", read_grant.token)
        assert not leases.check_fence("l.py::L", lost_token)
        assert leases.check_fence("k.py::K", kept_grant.token)  # still live
        assert conn.execute("SELECT epoch, crash_floor FROM lease_epoch").fetchone() == (
            2,
            2 << 40,
        )
        # a pre-crash lease that is released afterwards is no longer valid: refusing is safe
        assert leases.release("a") == 1
        assert not leases.check_fence("k.py::K", kept_grant.token)

        # many acquisitions racing after the next crash advance the epoch exactly once
        conn.execute("TRUNCATE lease_epoch_live")
        tokens: list[int] = []

        def acquire(n: int) -> None:
            with open_store(pg_dsn, migrate=False) as own:
                got = own.leases.try_acquire(
                    f"t{n}", "u", [LeaseRequest(f"t{n}.py::T", "write")], 60
                )
                assert isinstance(got, Acquired)
                tokens.append(got.grants[0].token)

        threads = [threading.Thread(target=acquire, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(tokens) == 6 and {t >> 40 for t in tokens} == {3}
        assert conn.execute("SELECT epoch FROM lease_epoch").fetchone() == (3,)


@pytest.mark.postgres
def test_fence_rows_are_inserted_once_then_updated_per_grant(pg_dsn: str) -> None:
    """Migration 0004: a fence is inserted by the first grant on its symbol and updated by every
    later one (token = newest grant; write_token = first token of the newest writing call)."""
    import psycopg

    from fleet.store import open_store

    def fence(conn: psycopg.Connection[tuple[object, ...]], symbol: str) -> tuple[object, ...]:
        row = conn.execute(
            "SELECT token, write_token FROM lease_fences WHERE symbol = %s", (symbol,)
        ).fetchone()
        assert row is not None
        return tuple(row)

    with open_store(pg_dsn) as store, psycopg.connect(pg_dsn, autocommit=True) as conn:
        leases = store.leases
        tokens = []
        for mode in ("read", "write", "read"):
            got = leases.try_acquire("a", "u", [LeaseRequest("m.py::A", mode)], 60)
            assert isinstance(got, Acquired)
            tokens.append(got.grants[0].token)
            assert leases.release("a", [got.grants[0].lease_id]) == 1
        assert tokens == sorted(tokens) and len(set(tokens)) == 3
        assert fence(conn, "m.py::A") == (tokens[2], tokens[1])
        assert leases.check_fence("m.py::A", tokens[2]) and not leases.check_fence(
            "m.py::A", tokens[0]
        )
        nested = leases.try_acquire(
            "b", "u", [LeaseRequest("m.py::A", "write"), LeaseRequest("m.py::A.f", "write")], 60
        )
        assert isinstance(nested, Acquired)
        outer, inner = sorted(nested.grants, key=lambda g: g.symbol)
        assert fence(conn, "m.py::A") == (outer.token, outer.token)
        assert fence(conn, "m.py::A.f") == (inner.token, outer.token)
        assert leases.check_fence("m.py::A", outer.token)
        assert leases.check_fence("m.py::A.f", inner.token)
        assert conn.execute("SELECT count(*) FROM lease_fences").fetchone() == (2,)
