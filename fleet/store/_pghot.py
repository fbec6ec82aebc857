"""The PostgreSQL lease hot path on libpq directly: a named statement, prepared once per
connection, executed with text parameters and read as text, without psycopg's cursor, adaptation
and row machinery (about a third of the client CPU of the same call through a cursor).

Lists travel as one text parameter (symbols joined by ``\\x1f``, ids by ``,``) and are split by
the server with ``string_to_array``. Errors leave as psycopg exceptions (the caller translates
them at the store's edge, as for every other statement).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import psycopg
from psycopg import errors, pq

__all__ = ["SEPARATOR", "HotPool", "HotStatement", "numbered"]

C = TypeVar("C")

SEPARATOR = "\x1f"  # ASCII unit separator: never part of a symbol id (try_acquire refuses it)
_UNDEFINED_STATEMENT = b"26000"


def numbered(sql: str, names: Sequence[str]) -> str:
    """``sql`` with its ``%(name)s`` parameters replaced by ``$1, $2, ...`` in the order of
    ``names`` (each must occur exactly once, in that order)."""
    found = re.findall(r"%\(([a-z_]+)\)s", sql)
    if found != list(names):
        raise ValueError(f"expected parameters {list(names)}, the query has {found}")
    counter = iter(range(1, len(names) + 1))
    return re.sub(r"%\(([a-z_]+)\)s", lambda _: f"${next(counter)}", sql)


class HotStatement:
    """One named statement of ``queries.sql``, run on an autocommit connection. It is prepared
    on a connection the first time that connection lacks it (the server answers 26000)."""

    def __init__(self, name: str, sql: str, params: Sequence[str]) -> None:
        self.name = f"fleet_{name}".encode()
        self.sql = numbered(sql, params).encode("utf-8")

    def rows(self, conn: psycopg.Connection[Any], params: Sequence[bytes]) -> list[list[Any]]:
        """The result rows as lists of ``bytes`` (text format) or ``None`` for NULL."""
        pgconn = conn.pgconn
        result = pgconn.exec_prepared(self.name, params)
        if (
            result.status == pq.ExecStatus.FATAL_ERROR
            and result.error_field(pq.DiagnosticField.SQLSTATE) == _UNDEFINED_STATEMENT
        ):
            prepared = pgconn.prepare(self.name, self.sql)
            if prepared.status != pq.ExecStatus.COMMAND_OK:
                raise errors.error_from_result(prepared)
            result = pgconn.exec_prepared(self.name, params)
        if result.status != pq.ExecStatus.TUPLES_OK:
            if pgconn.status == pq.ConnStatus.BAD:
                raise psycopg.OperationalError(
                    pgconn.get_error_message() or "the connection to the server was lost"
                )
            raise errors.error_from_result(result)
        width = result.nfields
        return [[result.get_value(r, c) for c in range(width)] for r in range(result.ntuples)]


class HotPool(Generic[C]):
    """At most ``size`` connections, reused LIFO; a broken connection is dropped, not reused; a
    forked child starts with an empty pool and never touches its parent's connections. The
    contract of :class:`fleet.store._db.Pool`, with a cheaper checkout: one plain lock section
    each way (a condition is waited on only when all ``size`` connections are out) and the fork
    handled by an ``os.register_at_fork`` hook instead of a ``getpid()`` per checkout. A grant
    takes two checkouts; with the caches as cold as they are between two round trips, the
    semaphore-based checkout cost ~25 µs of client CPU per grant more (docs/store.md)."""

    def __init__(self, factory: Callable[[], C], size: int, broken: Callable[[C], bool]) -> None:
        if size < 1:
            raise ValueError("a pool needs room for at least one connection")
        self._factory = factory
        self._broken = broken
        self._size = size
        self._forget()
        os.register_at_fork(after_in_child=functools.partial(_forget_after_fork, weakref.ref(self)))

    def _forget(self) -> None:
        """Start empty (in a forked child: abandon the parent's connections, never close them,
        which would end the parent's sessions)."""
        self._lock = threading.Lock()
        self._free = threading.Condition(self._lock)
        self._idle: list[C] = []
        self._all: list[C] = []
        self._opening = 0
        self._waiting = 0

    def acquire(self) -> C:
        """An idle connection, a new one while fewer than ``size`` exist, else wait for one."""
        with self._lock:
            while not self._idle and len(self._all) + self._opening >= self._size:
                self._waiting += 1
                try:
                    self._free.wait()
                finally:
                    self._waiting -= 1
            if self._idle:
                return self._idle.pop()
            self._opening += 1
        try:
            conn = self._factory()
        except BaseException:
            with self._lock:
                self._opening -= 1
                if self._waiting:
                    self._free.notify()
            raise
        with self._lock:
            self._opening -= 1
            self._all.append(conn)
        return conn

    def release(self, conn: C) -> None:
        broken = self._broken(conn)
        with self._lock:
            if broken:
                if conn in self._all:
                    self._all.remove(conn)
            elif conn in self._all:  # not a connection of before a fork or a close()
                self._idle.append(conn)
            if self._waiting:
                self._free.notify()
        if broken:
            _close(conn)

    @contextlib.contextmanager
    def connection(self) -> Iterator[C]:
        conn = self.acquire()
        try:
            yield conn
        finally:
            self.release(conn)

    def close(self) -> None:
        """Close every connection; those still out are dropped when they come back."""
        with self._lock:
            conns, self._all, self._idle = self._all, [], []
            if self._waiting:
                self._free.notify_all()
        for conn in conns:
            _close(conn)


def _forget_after_fork(ref: weakref.ref[HotPool[Any]]) -> None:
    pool = ref()
    if pool is not None:
        pool._forget()


def _close(conn: Any) -> None:
    # closing a dead connection must not mask the original fault
    with contextlib.suppress(Exception):
        conn.close()
