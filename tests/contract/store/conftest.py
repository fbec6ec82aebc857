"""The store contract suite runs every test against both stores: a real SQLite file and a real
PostgreSQL database (marker ``postgres``)."""

from __future__ import annotations

import uuid
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
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(store_url)
    name = f"fleet_f_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(store_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params["dbname"] = name
    try:
        yield make_conninfo(**params)  # type: ignore[arg-type]
    finally:
        with psycopg.connect(store_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
