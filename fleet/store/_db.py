"""The thin database layer under every role of the store: named queries, transactions, a small
connection pool. Dialect modules (``sqlite.py``, ``postgres.py``) supply connections, the
transaction statements and the translation of driver errors into :mod:`fleet.store.errors`."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from fleet.store.sql import Dialect, Migration, migrations, queries

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
    """At most ``size`` connections, reused LIFO; a broken connection is dropped, not reused."""

    def __init__(self, factory: Callable[[], C], size: int, broken: Callable[[C], bool]) -> None:
        self._factory = factory
        self._broken = broken
        self._idle: list[C] = []
        self._all: list[C] = []
        self._lock = threading.Lock()
        self._size = size
        self._slots = threading.BoundedSemaphore(size)
        self._pid = os.getpid()

    def _after_fork(self) -> None:
        """A forked child must not touch its parent's connections (closing one would end the
        parent's session): abandon them and start an empty pool."""
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._lock = threading.Lock()
            self._slots = threading.BoundedSemaphore(self._size)
            self._idle = []
            self._all = []

    @contextmanager
    def connection(self) -> Iterator[C]:
        self._after_fork()
        self._slots.acquire()
        conn: C | None = None
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                conn = self._factory()
                with self._lock:
                    self._all.append(conn)
            yield conn
        finally:
            if conn is not None:
                with self._lock:
                    if self._broken(conn):
                        self._all.remove(conn)
                        _close(conn)
                    else:
                        self._idle.append(conn)
            self._slots.release()

    def close(self) -> None:
        self._after_fork()
        with self._lock:
            for conn in self._all:
                _close(conn)
            self._all.clear()
            self._idle.clear()


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
