"""Stores behind the protocols of :mod:`fleet.protocols`: leases, task queue, ledger, controls
(kill switch, budgets), project memory, the artifact library, findings, change records and API
tokens. ``sqlite.py`` (embedded default) and ``postgres.py`` (shared); SQL in ``sql/*.sql`` named
blocks.

Entry point::

    store = open_store("sqlite:////abs/repo/.fleet/fleet.db")   # or "postgresql://..."
    store.leases.acquire_all(holder, unit, requests, ttl_s=60)
    store.close()

``open_store`` applies pending migrations. A :class:`Store` is safe to share between threads;
each process opens its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from fleet.errors import ConfigError, StoreError
from fleet.store._db import Database
from fleet.store._leases import LeaseStoreBase, ancestors, conflicts, contains, descendant_range
from fleet.store.controls import (
    BudgetState,
    KillState,
    Note,
    SqlControls,
    SqlMemory,
    day_scope,
    task_scope,
)
from fleet.store.errors import AppendOnlyViolation, StoreIntegrityError, StoreUnavailable
from fleet.store.keys import LeaseKeyError, canonical_symbol, resolve_path
from fleet.store.ledger import GENESIS, SqlLedger, canonical_json, event_hash
from fleet.store.library import Artifact, SqlLibrary
from fleet.store.queue import SqlTaskQueue, TaskRecord
from fleet.store.records import (
    ChangeRecord,
    FindingRecord,
    FindingStatus,
    SqlChanges,
    SqlFindings,
)
from fleet.store.tokens import SCOPES, SqlApiTokens, TokenInfo

__all__ = [
    "GENESIS",
    "SCOPES",
    "AppendOnlyViolation",
    "Artifact",
    "BudgetState",
    "ChangeRecord",
    "Database",
    "FindingRecord",
    "FindingStatus",
    "KillState",
    "LeaseKeyError",
    "LeaseStoreBase",
    "Note",
    "SqlApiTokens",
    "SqlChanges",
    "SqlControls",
    "SqlFindings",
    "SqlLedger",
    "SqlLibrary",
    "SqlMemory",
    "SqlTaskQueue",
    "Store",
    "StoreError",
    "StoreIntegrityError",
    "StoreUnavailable",
    "TaskRecord",
    "TokenInfo",
    "ancestors",
    "canonical_json",
    "canonical_symbol",
    "conflicts",
    "contains",
    "day_scope",
    "default_store_url",
    "descendant_range",
    "event_hash",
    "open_database",
    "open_store",
    "resolve_path",
    "task_scope",
]


@dataclass
class Store:
    """Every role of the store over one database. Close it (or use it as a context manager)."""

    db: Database
    leases: LeaseStoreBase
    queue: SqlTaskQueue
    ledger: SqlLedger
    controls: SqlControls
    memory: SqlMemory
    library: SqlLibrary
    findings: SqlFindings
    changes: SqlChanges
    tokens: SqlApiTokens

    @property
    def url(self) -> str:
        return self.db.url

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def default_store_url(cwd: str | Path | None = None) -> str:
    """``$FLEET_STORE_URL``, else ``fleet.db`` in ``$FLEET_HOME``, else in the state directory
    of the repository ``cwd`` (default: the current directory) is in — ``REPO/.fleet``, or
    ``<cwd>/.fleet`` outside any repository (``fleet.home.default_home``)."""
    from fleet.home import default_home

    url = os.environ.get("FLEET_STORE_URL")
    if url:
        return url
    home = Path(os.environ.get("FLEET_HOME") or default_home(cwd))
    return f"sqlite:///{(home / 'fleet.db').resolve()}"


def open_database(url: str) -> Database:
    """The database behind ``url`` without migrating it (``open_store`` migrates)."""
    if url.startswith("sqlite:///"):
        from fleet.store.sqlite import SqliteDatabase

        path = url[len("sqlite:///") :]
        if not path.startswith("/"):
            raise ConfigError(f"store url {url!r}: use an absolute path, sqlite:////abs/file.db")
        return SqliteDatabase(path)
    if url.startswith(("postgresql://", "postgres://")) or "dbname=" in url:
        from fleet.store.postgres import PostgresDatabase

        return PostgresDatabase(url)
    raise ConfigError(f"store url {url!r}: expected sqlite:////abs/path.db or postgresql://...")


def open_store(url: str, *, migrate: bool = True, repo_root: str | Path | None = None) -> Store:
    """Open the store at ``url`` (``sqlite:////abs/path.db``, a ``postgresql://`` URL or a libpq
    ``key=value`` DSN with ``dbname=``) and apply
    pending migrations. Raises ``ConfigError`` for a bad url, ``StoreError`` when unreachable.
    With ``repo_root`` the lease keys' paths are resolved through that checkout's symlinks
    (:mod:`fleet.store.keys`); without it they are only normalised as text."""
    db = open_database(url)
    try:
        if migrate:
            db.migrate()
        leases: LeaseStoreBase
        if db.dialect == "sqlite":
            from fleet.store.sqlite import SqliteDatabase, SqliteLeaseStore

            assert isinstance(db, SqliteDatabase)
            leases = SqliteLeaseStore(db, repo_root)
        else:
            from fleet.store.postgres import PostgresDatabase, PostgresLeaseStore

            assert isinstance(db, PostgresDatabase)
            leases = PostgresLeaseStore(db, repo_root)
    except BaseException:
        db.close()
        raise
    return Store(
        db=db,
        leases=leases,
        queue=SqlTaskQueue(db),
        ledger=SqlLedger(db),
        controls=SqlControls(db),
        memory=SqlMemory(db),
        library=SqlLibrary(db),
        findings=SqlFindings(db),
        changes=SqlChanges(db),
        tokens=SqlApiTokens(db),
    )
