"""One repository's view of a store that may hold many (a shared PostgreSQL store above all).

``scoped_store(store, key)`` is ``store`` with its findings and its ledger narrowed to the
repository whose store key is ``key`` (``fleet.home.repository_key``):

- findings: every read and write names the repository (the table's key is
  ``(repo, fingerprint)``), so the same code in two repositories is two findings and a sweep
  marks only its own repository's findings fixed;
- ledger: every event appended through the view records ``"repository": key`` in its payload
  (covered by the event's hash like the rest of it), and ``events`` returns this repository's
  events and those that belong to no repository (the kill switch, tokens, events written before
  events had a repository). A unit's key already names its base commit; the repository makes the
  campaign-wide events (``integration.finished``, ``pull_request.published``, ...) its own.

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
from typing import TYPE_CHECKING, Any

from fleet.store.ledger import REPOSITORY_FIELD, SqlLedger, payload_repository
from fleet.types import LedgerEvent

if TYPE_CHECKING:
    from fleet.store import Store

__all__ = ["REPOSITORY_FIELD", "RepoLedger", "event_repository", "scoped_store"]


def event_repository(event: LedgerEvent) -> str | None:
    """The repository an event belongs to, ``None`` for one of no repository."""
    return event.repo or payload_repository(event.payload) or None


class RepoLedger(SqlLedger):
    """The ledger of one repository over the shared chain (see the module docstring)."""

    def __init__(self, ledger: SqlLedger, repo: str) -> None:
        super().__init__(ledger.db)
        self.repo = repo

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
        return super().events(**{**filters, "repo": self.repo})  # by the repo column


def scoped_store(store: Store, repo: str) -> Store:
    """``store`` narrowed to the repository ``repo`` (``""``: the store as it is)."""
    if not repo:
        return store
    return dataclasses.replace(store, findings=store.findings.for_repo(repo),
                               ledger=RepoLedger(store.ledger, repo),
                               leases=store.leases.for_repo(repo))
