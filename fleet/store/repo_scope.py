"""One repository's view of a store that may hold many (a shared PostgreSQL store above all).

``scoped_store(store, key)`` is ``store`` with its findings and its ledger narrowed to the
repository whose store key is ``key`` (``fleet.home.repository_key``):

- findings: every read and write names the repository (the table's key is
  ``(repo, fingerprint)``), so the same code in two repositories is two findings and a sweep
  marks only its own repository's findings fixed;
- ledger: every event appended through the view records ``"repository": key`` in its payload
  (covered by the event's hash like the rest of it), and ``events`` returns this repository's
  events and the fleet's own (:data:`FLEET_WIDE_KINDS`: the kill switch), which name no
  repository. A unit's key already names its base commit; the repository makes the
  campaign-wide events (``integration.finished``, ``pull_request.published``, ...) its own.
  Events of any other kind that name no repository were written before events had one
  (``unit.finished``, ``integration.finished`` ...), or by a caller that gave no repository:
  on the store of one repository's state directory (``sqlite:///REPO/.fleet/fleet.db``, its
  ``repository.json`` naming ``key``) they are that repository's, as its unowned findings are
  (``SqlFindings.adopt_unowned``), and so on a SQLite file in no state directory that holds no
  event of another repository; on PostgreSQL (the shared store of the distributed setup), on
  a SQLite file that other repositories wrote to and on another repository's state
  directory's store, they may be any repository's, so no view reads them, and the first read
  says so in one warning line.

- leases: the repository's own keys (``LeaseStoreBase.for_repo``): ``app/config.py::load`` of
  A and of B are two keys, so two repositories' units never block each other, and a write
  granted in A never fences off a token of B.

Units are the repository's through the ledger: a unit carries its repository
(``WorkUnit.repository``, in its key too), ``unit.planned`` records it in the ``repo`` column,
and ``fleet.unit`` loads, plans and runs through a scoped ledger only the units of its
repository (``ForeignUnit`` otherwise).

The task queue, controls, memory and tokens stay shared: they are the fleet's.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.store.ledger import REPOSITORY_FIELD, SqlLedger, payload_repository
from fleet.types import LedgerEvent

if TYPE_CHECKING:
    from fleet.store import Store

__all__ = ["FLEET_WIDE_KINDS", "REPOSITORY_FIELD", "RepoLedger", "event_repository",
           "owns_store", "scoped_store", "store_owner"]

FLEET_WIDE_KINDS = frozenset({"kill_switch.engaged", "kill_switch.released"})
log = logging.getLogger(__name__)
_WARNED: set[tuple[str, str]] = set()
_WARNED_LOCK = threading.Lock()


def store_owner(url: str) -> str | None:
    """The store key of the repository whose state directory holds the SQLite store at ``url``
    (its folder's ``repository.json``); ``None`` for a store in no state directory (or
    PostgreSQL)."""
    from fleet.errors import ConfigError
    from fleet.home import IDENTITY_FILE, recorded_identity

    if not url.startswith("sqlite:///"):
        return None
    folder = Path(url[len("sqlite:///"):]).parent
    if not (folder / IDENTITY_FILE).is_file():
        return None
    try:
        recorded = recorded_identity(folder)
    except ConfigError:
        return None
    return recorded.key if recorded is not None else None


def owns_store(url: str, repo: str) -> bool:
    """The store at ``url`` is the one of ``repo``'s state directory (:func:`store_owner`)."""
    return bool(repo) and store_owner(url) == repo


def event_repository(event: LedgerEvent) -> str | None:
    """The repository an event belongs to, ``None`` for one of no repository."""
    return event.repo or payload_repository(event.payload) or None


class RepoLedger(SqlLedger):
    """The ledger of one repository over the shared chain (see the module docstring)."""

    def __init__(self, ledger: SqlLedger, repo: str) -> None:
        super().__init__(ledger.db)
        self.repo = repo
        self.owner = store_owner(ledger.db.url)  # see the module docstring
        self.adopts_unnamed = bool(repo) and self.owner == repo

    def append(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        unit: str | None = None,
        campaign: str | None = None,
        actor: str = "fleet",
    ) -> LedgerEvent:
        return super().append(kind, {**payload, REPOSITORY_FIELD: self.repo}, unit=unit,
                              campaign=campaign, actor=actor)

    def events(self, **filters: Any) -> list[LedgerEvent]:
        every = super().events(**{**filters, "repo": self.repo})  # by the repo column
        if self.adopts_unnamed or self._alone():
            return every
        unnamed = Counter(e.kind for e in every
                          if not e.repo and e.kind not in FLEET_WIDE_KINDS)
        if unnamed:
            self._warn(unnamed)
        return [e for e in every if e.repo or e.kind in FLEET_WIDE_KINDS]

    def _alone(self) -> bool:
        """A SQLite store in no state directory that no other repository wrote an event to."""
        if not self.db.url.startswith("sqlite") or self.owner is not None:
            return False  # PostgreSQL: shared by design; another's state directory's store
        with self.db.read() as tx:
            return tx.one("ledger_other_repo", {"repo": self.repo}) is None

    def _warn(self, unnamed: Counter[str]) -> None:
        with _WARNED_LOCK:
            if (self.db.url, self.repo) in _WARNED:
                return
            _WARNED.add((self.db.url, self.repo))
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(unnamed.items()))
        log.warning("ledger: %d event(s) that name no repository (written before events had "
                    "one: %s) are not read as %s's: the store %s is not its state directory's "
                    "own, so they may be any repository's", sum(unnamed.values()), kinds,
                    self.repo, re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", self.db.url))


def scoped_store(store: Store, repo: str) -> Store:
    """``store`` narrowed to the repository ``repo`` (``""``: the store as it is)."""
    if not repo:
        return store
    return dataclasses.replace(store, findings=store.findings.for_repo(repo),
                               ledger=RepoLedger(store.ledger, repo),
                               leases=store.leases.for_repo(repo))
