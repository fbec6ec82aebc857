"""The stores' connection pool (``fleet.store._db.Pool``, both dialects): bounded, LIFO, broken
connections dropped, a forked child starts empty, ``close()`` closes everything; and on a real
PostgreSQL server the store works through it from many threads at once."""

from __future__ import annotations

import itertools
import os
import threading
import time

import pytest

from fleet.store._db import Pool
from fleet.types import Acquired, LeaseRequest


class Handle:
    """What the pool needs of a connection: identity, ``close()`` and a broken flag."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.closed = False
        self.broken = False

    def close(self) -> None:
        self.closed = True


def _pool(size: int) -> tuple[Pool[Handle], list[Handle]]:
    made: list[Handle] = []
    counter = itertools.count()

    def factory() -> Handle:
        made.append(Handle(next(counter)))
        return made[-1]

    return Pool(factory, size, lambda h: h.closed or h.broken), made


def test_reuses_the_last_returned_connection_and_drops_broken_ones() -> None:
    pool, made = _pool(4)
    with pool.connection() as a, pool.connection() as b:
        assert (a.number, b.number) == (0, 1)
    with pool.connection() as again:
        assert again is a  # LIFO: a came back last
        again.broken = True
    assert made[0].closed  # a broken connection is closed and dropped
    with pool.connection() as c, pool.connection() as d:
        assert {c.number, d.number} == {1, 2}
    with pytest.raises(ValueError):
        Pool(lambda: Handle(0), 0, lambda h: False)


def test_never_opens_more_than_size_and_waiters_get_a_returned_one() -> None:
    pool, made = _pool(2)
    first, second = pool.acquire(), pool.acquire()
    got: list[Handle] = []
    waiter = threading.Thread(target=lambda: got.append(pool.acquire()))
    waiter.start()
    time.sleep(0.2)
    assert got == [] and len(made) == 2  # the third caller waits
    pool.release(second)
    waiter.join(5)
    assert got == [second] and len(made) == 2
    second.broken = True
    pool.release(second)  # a broken return frees its slot: the next caller opens a new one
    assert pool.acquire().number == 2
    pool.release(first)


def test_a_failing_factory_frees_its_slot() -> None:
    calls = itertools.count()

    def factory() -> Handle:
        if next(calls) == 0:
            raise OSError("server unreachable")
        return Handle(1)

    pool: Pool[Handle] = Pool(factory, 1, lambda h: h.closed)
    with pytest.raises(OSError):
        pool.acquire()
    assert pool.acquire().number == 1


def test_close_closes_idle_and_checked_out_connections() -> None:
    pool, made = _pool(3)
    out = pool.acquire()
    with pool.connection():
        pass
    pool.close()
    assert all(h.closed for h in made)
    pool.release(out)  # closed: dropped, not reused
    with pool.connection() as fresh:
        assert fresh not in made[:2] and not fresh.closed


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_empty_and_leaves_the_parents_connections_alone() -> None:
    pool, made = _pool(1)
    held = pool.acquire()  # the only slot, checked out in the parent
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: it must not wait for the parent's slot nor reuse its connection
        try:
            with pool.connection() as own:
                ok = own is not held and not held.closed
            pool.close()
            os.write(write, b"ok" if ok and not held.closed else b"bad")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 8) == b"ok" and status == 0
    os.close(read)
    assert not held.closed and len(made) == 1
    pool.release(held)
    with pool.connection() as again:
        assert again is held


@pytest.mark.postgres
def test_the_store_serves_many_threads_through_a_small_pool(pg_dsn: str) -> None:
    from fleet.store import open_store
    from fleet.store.postgres import PostgresDatabase, PostgresLeaseStore

    db = PostgresDatabase(pg_dsn, pool_size=2)
    try:
        db.migrate()
        leases = PostgresLeaseStore(db)
        granted: list[int] = []
        lock = threading.Lock()

        def worker(n: int) -> None:
            for k in range(25):
                got = leases.try_acquire(
                    f"t{n}", "u", [LeaseRequest(f"t{n}.py::C{k}", "write")], 60
                )
                assert isinstance(got, Acquired)
                assert leases.release(f"t{n}", [g.lease_id for g in got.grants]) == 1
                with lock:
                    granted.append(got.grants[0].token)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(granted) == 150 and len(set(granted)) == 150
        assert len(db._pool._all) <= 2
    finally:
        db.close()
    with open_store(pg_dsn) as store:
        assert store.leases.held() == []
