"""The store contract suite runs every test against both stores: a real SQLite file and a real
PostgreSQL database (marker ``postgres``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.store import Store, open_store


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'fleet.db'}"
    return str(request.getfixturevalue("pg_dsn"))


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with open_store(store_url) as opened:
        yield opened


@pytest.fixture
def fresh_url(store_url: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of the same kind as ``store_url``'s (a new PostgreSQL database beside
    it, dropped after the test)."""
    if store_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    from tests._pgcluster import throwaway_database

    with throwaway_database(store_url, "fleet_f_") as dsn:
        yield dsn
