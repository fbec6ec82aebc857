"""The PostgreSQL lease hot path: positional SQL for prepared calls, and a release that commits
asynchronously in its own transaction only (the server default and every other write stay
synchronous)."""

from __future__ import annotations

import pytest

from fleet.store.postgres import positional
from fleet.types import Acquired, LeaseRequest


def test_positional_keeps_the_parameter_order() -> None:
    sql = "SELECT f(%(holder)s, %(ids)s::bigint[]) AS n"
    assert positional(sql, ("holder", "ids")) == "SELECT f(%s, %s::bigint[]) AS n"
    with pytest.raises(ValueError, match="expected parameters"):
        positional(sql, ("ids", "holder"))
    with pytest.raises(ValueError, match="expected parameters"):
        positional("SELECT %(a)s + %(a)s", ("a",))


@pytest.mark.postgres
def test_release_is_asynchronous_for_its_own_transaction_only(pg_dsn: str) -> None:
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
        # the rolled-back release changed nothing; the store's own release deletes it
        assert [g.symbol for g in store.leases.held(holder="a")] == ["m.py::A"]
        assert store.leases.release("a", [got.grants[0].lease_id, "999999"]) == 1
        assert store.leases.release("a", [got.grants[0].lease_id]) == 0
        assert store.leases.held() == []
