"""The embedded store: one SQLite file, safe for many processes on one machine.

WAL journal (readers never block the writer), every writing transaction is ``BEGIN IMMEDIATE``
(writers serialize on the database lock instead of failing on upgrade), and a busy timeout so a
waiting writer queues instead of erroring. That serialization is what makes the lease checks
correct across processes: a lease transaction sees every lease committed before it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fleet.errors import StoreError
from fleet.store._db import Database, Pool, Tx
from fleet.store._leases import (
    LeaseStoreBase,
    ancestors,
    descendant_range,
    fence_holds,
    grant_from_row,
    normalize,
    refused_by,
)
from fleet.store.errors import AppendOnlyViolation, StoreIntegrityError, StoreUnavailable
from fleet.store.sql import migrator, schema
from fleet.types import Acquired, AcquireResult, Grant, LeaseRequest

__all__ = ["SqliteDatabase", "SqliteLeaseStore", "split_script"]


def translate(exc: sqlite3.Error) -> StoreError:
    message = f"sqlite: {exc}"
    if "append-only" in str(exc):
        return AppendOnlyViolation(message)
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreIntegrityError(message)
    if isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "unable to open" in str(exc) or "busy" in str(exc)
    ):
        return StoreUnavailable(message)
    return StoreError(message)


def split_script(script: str) -> list[str]:
    """Split a SQL script into statements (triggers keep their inner semicolons)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            text = "\n".join(
                ln for ln in buffer.strip().splitlines() if not ln.lstrip().startswith("--")
            ).strip()
            if text:
                statements.append(text)
            buffer = ""
    if buffer.strip() and any(
        not ln.lstrip().startswith("--") for ln in buffer.strip().splitlines()
    ):
        raise StoreError(f"incomplete SQL statement: {buffer.strip()[:80]}")
    return statements


class SqliteDatabase(Database):
    dialect = "sqlite"

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0, pool_size: int = 8):
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.busy_timeout_s = busy_timeout_s
        super().__init__()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"cannot create {self.path.parent}: {exc}") from exc
        self._pool: Pool[sqlite3.Connection] = Pool(self._connect, pool_size, lambda c: False)

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            self._journal_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise translate(exc) from exc
        return conn

    def _journal_wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL, waiting out other processes doing the same.

        Changing the journal mode of a fresh file needs its exclusive lock, and SQLite answers
        "database is locked" at once, without calling the busy handler, when another connection
        holds a lock it could deadlock with -- which is what several processes opening one new
        store at the same moment do. So this waits and retries up to the busy timeout.
        """
        deadline = time.monotonic() + self.busy_timeout_s
        delay = 0.005
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    @contextmanager
    def transaction(self, write: bool) -> Iterator[Tx]:
        with self._pool.connection() as conn:
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield Tx(conn.cursor(), self.sql)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise translate(exc) from exc

    def migrate(self) -> list[int]:
        applied_now: list[int] = []
        with self.transaction(True) as tx:
            statements = migrator("sqlite")
            tx.raw(statements["migrations_table"])
            applied = {row[0] for row in tx.raw(statements["migrations_applied"])}
            for migration in self.pending(applied, "sqlite"):
                for statement in split_script(migration.sql):
                    tx.raw(statement)
                tx.raw(
                    statements["migration_record"], (migration.version, migration.name, self.now())
                )
                applied_now.append(migration.version)
        return applied_now

    def list_param(self, values: list[Any] | None) -> Any:
        return None if values is None else json.dumps(values)

    def apply_schema(self) -> None:
        """Create the current schema directly (for the migrations-agree-with-schema test)."""
        with self.transaction(True) as tx:
            for statement in split_script(schema("sqlite")):
                tx.raw(statement)

    def close(self) -> None:
        self._pool.close()


class SqliteLeaseStore(LeaseStoreBase):
    """Leases in the SQLite file; every acquisition is one ``BEGIN IMMEDIATE`` transaction."""

    def __init__(self, db: SqliteDatabase, root: str | Path | None = None) -> None:
        self.db = db
        self.root = None if root is None else Path(root)

    def try_acquire(
        self, holder: str, unit: str, requests: Sequence[LeaseRequest], ttl_s: float
    ) -> AcquireResult:
        return self.shown(self._acquire(self.stored_holder(holder), unit, requests, ttl_s))

    def _acquire(
        self, holder: str, unit: str, requests: Sequence[LeaseRequest], ttl_s: float
    ) -> AcquireResult:
        wanted = self.stored_requests(normalize(requests, self.root))
        with self.db.write() as tx:
            now = self.db.now()
            for request in wanted:
                lo, hi = descendant_range(request.symbol)
                blockers = tx.all(
                    "lease_conflicts",
                    {
                        "now": now,
                        "holder": holder,
                        "mode": request.mode,
                        "symbol": request.symbol,
                        "ancestors": json.dumps(ancestors(request.symbol)),
                        "lo": lo,
                        "hi": hi,
                    },
                )
                if blockers:
                    return refused_by(blockers, request.symbol)
            grants: list[Grant] = []
            base: int | None = None  # the first token of this acquisition
            for request in wanted:
                token_row = tx.one("fence_next")
                assert token_row is not None
                base = token_row["value"] if base is None else base
                params = {
                    "symbol": request.symbol,
                    "mode": request.mode,
                    "holder": holder,
                    "unit": unit,
                    "token": token_row["value"],
                    "base": base,
                    "now": now,
                    "ttl": ttl_s,
                }
                row = tx.one("lease_insert", params)
                assert row is not None
                tx.run("fence_upsert", params)
                grants.append(grant_from_row(row))
        return Acquired(tuple(grants))

    def renew(self, holder: str, ttl_s: float) -> int:
        holder = self.stored_holder(holder)
        with self.db.write() as tx:
            return tx.run("lease_renew", {"holder": holder, "ttl": ttl_s, "now": self.db.now()})

    def release(self, holder: str, lease_ids: Iterable[str] | None = None) -> int:
        holder = self.stored_holder(holder)
        ids = None if lease_ids is None else [int(i) for i in lease_ids]
        with self.db.write() as tx:
            if ids is None:
                return tx.run("lease_release", {"holder": holder})
            return tx.run("lease_release_ids", {"holder": holder, "ids": json.dumps(ids)})

    def check_fence(self, symbol: str, token: int) -> bool:
        symbol = self.stored(self.key(symbol))
        lo, hi = descendant_range(symbol)
        with self.db.read() as tx:
            row = tx.one(
                "fence_state",
                {"symbol": symbol, "ancestors": json.dumps(ancestors(symbol)), "lo": lo, "hi": hi},
            )
        assert row is not None
        return fence_holds(token, row["token"], row["write_token"])

    def held(self, within: str | None = None, holder: str | None = None) -> list[Grant]:
        holder = self.stored_holder(holder) if holder else None
        within = self.stored(self.key(within)) if within else None
        lo, hi = descendant_range(within) if within else ("", "")
        with self.db.read() as tx:
            rows = tx.all(
                "lease_held",
                {"now": self.db.now(), "prefix": within, "lo": lo, "hi": hi, "holder": holder},
            )
        return self.shown_grants(grant_from_row(row) for row in rows)

    def reap(self) -> int:
        with self.db.write() as tx:
            return tx.run("lease_reap", {"now": self.db.now()})
