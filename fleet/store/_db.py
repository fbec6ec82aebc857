"""The thin database layer under every role of the store: named queries, transactions, a small
connection pool. Dialect modules (``sqlite.py``, ``postgres.py``) supply connections, the
transaction statements and the translation of driver errors into :mod:`fleet.store.errors`."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from fleet.store.sql import Dialect, Migration, migrations, queries

__all__ = ["C", "Database", "Pool", "Row", "Tx"]

Row = dict[str, Any]
C = TypeVar("C")


class Tx:
    """One open transaction: run named queries of the dialect's ``queries.sql``."""

    def __init__(self, cursor: Any, sql: dict[str, str]) -> None:
        self._cursor = cursor
        self._sql = sql

    def _execute(self, name: str, params: dict[str, Any] | None) -> Any:
        return self._cursor.execute(self._sql[name], params or {})

    def run(self, name: str, params: dict[str, Any] | None = None) -> int:
        """Execute; returns the number of rows changed."""
        return int(self._execute(name, params).rowcount)

    def one(self, name: str, params: dict[str, Any] | None = None) -> Row | None:
        row = self._execute(name, params).fetchone()
        return None if row is None else dict(row)

    def all(self, name: str, params: dict[str, Any] | None = None) -> list[Row]:
        return [dict(row) for row in self._execute(name, params).fetchall()]

    def raw(self, sql: str | bytes, params: Any = None) -> Any:
        """An ad-hoc statement (tests, migrations); prefer named queries."""
        if params is None:
            return self._cursor.execute(sql)
        return self._cursor.execute(sql, params)


class Pool(Generic[C]):
    """At most ``size`` connections, reused LIFO; a broken connection is dropped, not reused; a
    forked child starts with an empty pool and never touches its parent's connections. One plain
    lock section each way (a condition is waited on only when all ``size`` connections are out)
    and the fork handled by an ``os.register_at_fork`` hook instead of a ``getpid()`` per
    checkout: a PostgreSQL grant takes two checkouts, and the earlier semaphore-based pool cost
    ~25 µs of client CPU per grant more (docs/store.md)."""

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


def _forget_after_fork(ref: weakref.ref[Pool[Any]]) -> None:
    pool = ref()
    if pool is not None:
        pool._forget()


def _close(conn: Any) -> None:
    # closing a dead connection must not mask the original fault
    with contextlib.suppress(Exception):
        conn.close()


class Database(ABC):
    """A store database of one dialect. ``write()`` opens a transaction that serializes with
    other writers where the dialect needs it (SQLite ``BEGIN IMMEDIATE``); ``read()`` a read-only
    snapshot. Every driver error leaving either is a ``StoreError``."""

    dialect: Dialect
    url: str

    def __init__(self) -> None:
        self.sql = queries(self.dialect)

    @abstractmethod
    def transaction(self, write: bool) -> Any:
        """Context manager yielding a :class:`Tx`."""

    @contextmanager
    def write(self) -> Iterator[Tx]:
        with self.transaction(True) as tx:
            yield tx

    @contextmanager
    def read(self) -> Iterator[Tx]:
        """For one read statement (PostgreSQL runs it in autocommit: one round trip)."""
        with self.transaction(False) as tx:
            yield tx

    @contextmanager
    def single(self) -> Iterator[Tx]:
        """For exactly one writing statement, which is atomic by itself: PostgreSQL runs it in
        autocommit (one round trip instead of three); SQLite still takes the write lock first."""
        with self.transaction(True) as tx:
            yield tx

    @abstractmethod
    def migrate(self) -> list[int]:
        """Apply pending migrations (idempotent, safe when many processes open at once);
        returns the versions applied now."""

    @abstractmethod
    def close(self) -> None: ...

    def now(self) -> float:
        return time.time()

    def list_param(self, values: list[Any] | None) -> Any:
        """A list query parameter in the dialect's form (SQLite: JSON text; PostgreSQL: array)."""
        return values

    @staticmethod
    def pending(applied: set[int], dialect: Dialect) -> list[Migration]:
        return [m for m in migrations(dialect) if m.version not in applied]
