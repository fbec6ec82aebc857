"""Auditing a store that must already exist: ``fleet ledger verify`` opens the store without
migrating it, so a missing, empty (0-byte), foreign or corrupted store is a one-line
``StoreError`` naming it -- never a fresh schema that then "verifies: 0 events", never a
traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fleet.errors import FleetError, StoreError
from fleet.store.checkpoint import Checkpoint
from fleet.store.errors import StoreNotFound
from fleet.store.ledger import LedgerAudit

__all__ = ["audit_store"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def _sqlite_tables(path: Path) -> set[str]:
    """Our tables in the SQLite file, read through a read-only connection: a foreign or damaged
    file is not switched to WAL (which rewrites its header) before it is known to be ours."""
    import sqlite3

    from fleet.store.sql import migrator

    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return {row[0] for row in conn.execute(migrator("sqlite")["schema_tables"])}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"store {path}: sqlite: {exc}") from None


def _check_sqlite_file(path: Path, url: str) -> None:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            magic = handle.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        raise StoreNotFound(f"no fleet store at {url}") from None
    except OSError as exc:
        raise StoreError(f"store {path}: cannot read it ({exc.strerror})") from None
    if not path.is_file():
        raise StoreError(f"store {path} is not a file")
    if size == 0:
        raise StoreError(f"store {path} is empty (0 bytes): not a fleet store")
    if magic != _SQLITE_MAGIC:
        raise StoreError(f"store {path} is not a SQLite database (corrupted or foreign file)")


def _require_tables(url: str, found: set[str]) -> None:
    missing = sorted({"schema_migrations", "ledger"} - found)
    if missing:
        raise StoreError(f"store {url} has no {' or '.join(missing)} table: not a fleet store")


def audit_store(url: str, checkpoints: Sequence[Checkpoint] = ()) -> LedgerAudit:
    """The ledger audit (:meth:`fleet.store.ledger.SqlLedger.audit`) of the existing store at
    ``url``. Raises ``StoreError`` (one line) when it is missing, empty, not a store of ours
    or unreadable; ``ConfigError`` for a bad url."""
    from fleet.store import open_database
    from fleet.store.ledger import SqlLedger
    from fleet.store.sql import migrator

    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        _check_sqlite_file(path, url)
        _require_tables(url, _sqlite_tables(path))
    db = open_database(url)
    try:
        with db.read() as tx:
            rows = tx.raw(migrator(db.dialect)["schema_tables"]).fetchall()
        _require_tables(
            url, {next(iter(r.values())) if isinstance(r, dict) else r[0] for r in rows}
        )
        return SqlLedger(db).audit(checkpoints)
    except StoreError as exc:
        line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if url in line:
            raise
        raise StoreError(f"store {url}: {line}") from exc
    except FleetError:
        raise
    except Exception as exc:  # a driver fault the dialect did not translate
        line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"store {url}: {line}") from exc
    finally:
        db.close()
