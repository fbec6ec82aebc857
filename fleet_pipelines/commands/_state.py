"""The state a command on one repository uses, and the check that it is that repository's.

Every command that takes a repository (``plan``, ``fix``, ``verify --unit``, ``rollback``,
``task``, ``ledger verify --repo``, ``serve``, ``sweep``) defaults its state directory to the
repository's own (``--home``, else ``$FLEET_HOME``, else ``REPO/.fleet``: ``fleet.home.home_of``)
and its store to ``fleet.db`` there (unless ``--store`` / ``$FLEET_STORE_URL``); a state
directory, or a SQLite store kept in one, that belongs to another repository is refused in one
line naming both (``fleet.home.HomeMismatch``, exit 2). A shared PostgreSQL store is shared on
purpose: each repository sees its own rows through ``fleet.store.repo_scope``. (``index --out``
and ``graph --snapshot``: the snapshot names its repository, ``fleet.graph._persist``.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import typer

__all__ = ["RepoState", "repo_state", "state_or_exit"]


@dataclass(frozen=True)
class RepoState:
    """A repository's state directory, its store URL and the key its rows carry there."""

    home: Path
    store_url: str
    key: str


def repo_state(repo: Path, *, home: Path | None = None, store: str | None = None,
               claim: bool = False) -> RepoState:
    """The state of the repository ``repo`` is in (see the module docstring); ``claim`` (the
    commands that write state) creates and records the state directory, else it is only
    checked. Raises ``HomeMismatch`` (a ``ConfigError``) for another repository's."""
    from fleet.home import check_home, check_store, claim_home, home_of, store_key

    chosen = home_of(repo, home)
    (claim_home if claim else check_home)(chosen, repo)
    url = store or os.environ.get("FLEET_STORE_URL") or (
        f"sqlite:///{chosen.resolve() / 'fleet.db'}")
    check_store(url, repo)
    return RepoState(chosen, url, store_key(chosen, repo))


def state_or_exit(repo: Path, *, home: Path | None = None, store: str | None = None,
                  claim: bool = False) -> RepoState:
    """:func:`repo_state`, a ``FleetError`` said in one line on stderr and exit 2."""
    from fleet.errors import FleetError

    try:
        return repo_state(repo, home=home, store=store, claim=claim)
    except FleetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
