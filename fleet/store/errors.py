"""Store faults: driver errors (sqlite3, psycopg) are translated into these at the edge."""

from __future__ import annotations

from fleet.errors import StoreError

__all__ = ["AppendOnlyViolation", "StoreIntegrityError", "StoreNotFound", "StoreUnavailable"]


class StoreUnavailable(StoreError):
    """The database cannot be reached or is busy beyond its timeout."""


class StoreNotFound(StoreError):
    """No store exists at the given URL (a read-only command never creates one)."""


class StoreIntegrityError(StoreError):
    """A constraint refused a statement (unique key, foreign key, check)."""


class AppendOnlyViolation(StoreError):
    """An UPDATE or DELETE of the append-only ledger was refused by the database."""
