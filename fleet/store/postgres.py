"""The shared store on PostgreSQL (psycopg 3), for fleets that span machines.

Leases are taken by one server-side function call (``fleet_lease_acquire`` in
``sql/postgres/schema/01_leases.sql``): multi-granularity advisory locks, tried without waiting,
keep two overlapping acquisitions from ever running at once (the second is refused as contended
and retried by ``acquire_all``), while acquisitions in unrelated or sibling symbols run in
parallel. A release is one call of ``fleet_lease_release``. Releases and three in four
acquisitions commit asynchronously (only that transaction; why a crash cannot break no-conflict
or fencing is argued in ``01_leases.sql`` and docs/store.md; every fourth acquisition commits
synchronously so that the others do not wake the WAL writer one by one). The task queue claims with
``FOR UPDATE SKIP LOCKED``. Driver errors become :mod:`fleet.store.errors`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.rows import dict_row

from fleet.errors import StoreError
from fleet.store._db import Database, Pool, Tx
from fleet.store._leases import (
    LeaseStoreBase,
    fence_holds,
    grant_from_row,
    normalize,
    refused_by,
)
from fleet.store._pghot import SEPARATOR, HotStatement
from fleet.store.errors import AppendOnlyViolation, StoreIntegrityError, StoreUnavailable
from fleet.store.sql import migrator, schema
from fleet.types import Acquired, AcquireResult, Grant, LeaseRequest, Refused

__all__ = ["PostgresDatabase", "PostgresLeaseStore", "translate"]

MIGRATION_LOCK = (1718, 0)
SQL = migrator("postgres")
ACQUIRE_PARAMS = ("holder", "unit", "symbols", "modes", "ttl")


def _grant(row: list[Any]) -> Grant:
    """A granted row of ``lease_acquire`` in text format."""
    return Grant(
        row[1].decode(),
        row[2].decode(),
        "write" if row[3] == b"write" else "read",
        row[4].decode(),
        int(row[5]),
        float(row[6]),
    )


def _blocker(row: list[Any]) -> dict[str, object]:
    return {"symbol": _text(row[2]), "holder": _text(row[4])}


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode()


def shown_url(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***`` (for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def translate(exc: psycopg.Error) -> StoreError:
    message = f"postgres: {str(exc).strip()}"
    if "append-only" in str(exc):
        return AppendOnlyViolation(message)
    if isinstance(exc, psycopg.IntegrityError):
        return StoreIntegrityError(message)
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return StoreUnavailable(message)
    return StoreError(message)


class PostgresDatabase(Database):
    dialect = "postgres"

    def __init__(self, url: str, *, pool_size: int = 8, connect_timeout_s: int = 10) -> None:
        self.url = url
        self.connect_timeout_s = connect_timeout_s
        super().__init__()
        self._pool: Pool[psycopg.Connection[Any]] = Pool(
            self._connect, pool_size, lambda c: c.closed or c.broken
        )

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(
                self.url,
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=self.connect_timeout_s,
                application_name="fleet",
            )
        except psycopg.Error as exc:
            error = translate(exc)
            if isinstance(error, StoreUnavailable):  # name the store: which of the databases
                reason = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
                error = StoreUnavailable(
                    f"the fleet store {shown_url(self.url)} cannot be reached: {reason}")
            raise error from exc

    @contextmanager
    def transaction(self, write: bool) -> Iterator[Tx]:
        if not write:
            with self.single() as tx:
                yield tx
            return
        with self._pool.connection() as conn:
            try:
                with conn.transaction(), conn.cursor() as cursor:
                    yield Tx(cursor, self.sql)
            except psycopg.Error as exc:
                raise translate(exc) from exc

    @contextmanager
    def single(self) -> Iterator[Tx]:
        with self._pool.connection() as conn:
            try:
                with conn.cursor() as cursor:
                    yield Tx(cursor, self.sql)
            except psycopg.Error as exc:
                raise translate(exc) from exc

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled autocommit connection for the hot lease path: the caller runs exactly one
        statement on it (atomic by itself); driver errors leave as ``StoreError``."""
        with self._pool.connection() as conn:
            try:
                yield conn
            except psycopg.Error as exc:
                raise translate(exc) from exc

    def hot_rows(self, statement: HotStatement, params: Sequence[bytes]) -> list[list[Any]]:
        """Run one hot-path statement (atomic by itself) on a pooled autocommit connection and
        return its rows as text (:meth:`HotStatement.rows`); driver errors leave as
        ``StoreError``. The same as :meth:`connection` without its generator layers, which cost
        a few microseconds per call on the per-grant path."""
        pool = self._pool
        conn = pool.acquire()
        try:
            return statement.rows(conn, params)
        except psycopg.Error as exc:
            raise translate(exc) from exc
        finally:
            pool.release(conn)

    def list_param(self, values: list[Any] | None) -> Any:
        return values

    def migrate(self) -> list[int]:
        applied_now: list[int] = []
        with self._pool.connection() as conn:
            try:
                conn.execute(SQL["migration_lock"].encode(), MIGRATION_LOCK)
                try:
                    with conn.transaction():
                        conn.execute(SQL["migrations_table"].encode())
                        rows = conn.execute(SQL["migrations_applied"].encode()).fetchall()
                    applied = {row["version"] for row in rows}
                    for migration in self.pending(applied, "postgres"):
                        with conn.transaction():
                            conn.execute(migration.sql.encode("utf-8"))
                            conn.execute(
                                SQL["migration_record"].encode(),
                                (migration.version, migration.name, self.now()),
                            )
                        applied_now.append(migration.version)
                finally:
                    conn.execute(SQL["migration_unlock"].encode(), MIGRATION_LOCK)
            except psycopg.Error as exc:
                raise translate(exc) from exc
        return applied_now

    def apply_schema(self) -> None:
        """Create the current schema directly (for the migrations-agree-with-schema test)."""
        with self.transaction(True) as tx:
            tx.raw(schema("postgres").encode("utf-8"))

    def close(self) -> None:
        self._pool.close()


class PostgresLeaseStore(LeaseStoreBase):
    """Leases on PostgreSQL: one round trip per acquisition, release or renewal. Acquire and
    release (the per-grant hot path) run their named query as a statement prepared once per
    connection, on libpq directly with text parameters (:mod:`fleet.store._pghot`).

    Releases and three in four acquisitions commit asynchronously (their own transactions
    only); fencing tokens carry the server's crash epoch, so no token is ever issued twice and a
    grant lost in a crash is refused by :meth:`check_fence` (docs/store.md)."""

    def __init__(self, db: PostgresDatabase, root: str | Path | None = None) -> None:
        self.db = db
        self.root = None if root is None else Path(root)
        self._acquire = HotStatement("lease_acquire_v5", db.sql["lease_acquire"], ACQUIRE_PARAMS)
        self._release_ids = HotStatement(
            "lease_release_ids_v5", db.sql["lease_release_ids"], ("holder", "ids")
        )
        self._release_one = HotStatement(
            "lease_release_one_v5", db.sql["lease_release_one"], ("holder", "ids")
        )

    def try_acquire(
        self, holder: str, unit: str, requests: Sequence[LeaseRequest], ttl_s: float
    ) -> AcquireResult:
        return self.shown(self._acquire_set(self.stored_holder(holder), unit, requests, ttl_s))

    def _acquire_set(
        self, holder: str, unit: str, requests: Sequence[LeaseRequest], ttl_s: float
    ) -> AcquireResult:
        wanted = self.stored_requests(normalize(requests, self.root))
        if not wanted:
            return Acquired(())
        symbols = SEPARATOR.join([r.symbol for r in wanted])
        if symbols.count(SEPARATOR) != len(wanted) - 1:  # a symbol contains the separator
            raise ValueError("a lease symbol must not contain the character U+001F")
        params = (
            holder.encode(),
            unit.encode(),
            symbols.encode(),
            SEPARATOR.join([r.mode for r in wanted]).encode(),
            repr(float(ttl_s)).encode(),
        )
        rows = self.db.hot_rows(self._acquire, params)
        if rows and all(row[0] == b"t" for row in rows):
            return Acquired(tuple([_grant(row) for row in rows]))
        blockers = [_blocker(row) for row in rows if row[0] != b"t"]
        if blockers and all(row["holder"] is None for row in blockers):
            return Refused("contended: an overlapping acquisition was in progress")
        if not blockers:  # pragma: no cover - the function returns grants or blockers
            return Refused("no grant returned")
        return refused_by(blockers, ", ".join(r.symbol for r in wanted))

    def renew(self, holder: str, ttl_s: float) -> int:
        holder = self.stored_holder(holder)
        with self.db.single() as tx:
            return tx.run("lease_renew", {"holder": holder, "ttl": float(ttl_s)})

    def release(self, holder: str, lease_ids: Iterable[str] | None = None) -> int:
        holder = self.stored_holder(holder)
        if lease_ids is None:
            with self.db.single() as tx:
                row = tx.one("lease_release", {"holder": holder})
            return int(row["n"]) if row is not None else 0
        wanted = [str(int(i)) for i in lease_ids]
        statement = self._release_one if len(wanted) == 1 else self._release_ids
        rows = self.db.hot_rows(statement, (holder.encode(), ",".join(wanted).encode()))
        return int(rows[0][0]) if rows and rows[0][0] is not None else 0

    def check_fence(self, symbol: str, token: int) -> bool:
        symbol = self.stored(self.key(symbol))
        with self.db.read() as tx:
            row = tx.one("fence_state", {"symbol": symbol, "token": int(token)})
        assert row is not None
        return bool(row["this_life"]) and fence_holds(token, row["token"], row["write_token"])

    def held(self, within: str | None = None, holder: str | None = None) -> list[Grant]:
        holder = self.stored_holder(holder) if holder else None
        within = self.stored(self.key(within)) if within else None
        with self.db.read() as tx:
            rows = tx.all("lease_held", {"prefix": within, "holder": holder})
        return self.shown_grants(grant_from_row(row) for row in rows)

    def reap(self) -> int:
        with self.db.single() as tx:
            return tx.run("lease_reap")
