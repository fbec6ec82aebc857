"""deploy/dagster.yaml's pooled PostgreSQL storage (fleet_pipelines/pg_storage.py), on a real
server: it opens a handful of server connections where the stock storage opens one per statement
group, a run worker's instance (made from the instance's ref) is pooled too, and a connection the
server dropped or a fork inherited is replaced, not reused."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from dagster import DagsterInstance
from sqlalchemy import text

from tests.engine.conftest import pg_url

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "dagster.yaml"
STOCK = """storage:
  postgres:
    postgres_url:
      env: DAGSTER_POSTGRES_URL
"""


def _home(root: Path, stock: bool) -> Path:
    text = DEPLOY.read_text()
    start = text.index("storage:\n")
    end = text.index("\n# ", start)
    if stock:
        text = text[:start] + STOCK + text[end + 1:]
    root.mkdir()
    (root / "dagster.yaml").write_text(text)
    return root


def _sessions(dsn: str) -> int:
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s",
                           (name,)).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def dagster_url(second_pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("DAGSTER_POSTGRES_URL", pg_url(second_pg_dsn, "postgresql+psycopg2"))
    yield second_pg_dsn


def _work(instance: DagsterInstance) -> None:
    for _ in range(50):
        instance.get_runs(limit=5)
        instance.get_run_by_id("no-such-run")
        instance.get_latest_materialization_events([])


def test_the_deployment_storage_opens_a_few_connections_where_the_stock_one_opens_one_per_read(
        tmp_path: Path, dagster_url: str) -> None:
    counts = {}
    for stock in (True, False):
        with DagsterInstance.from_config(str(_home(tmp_path / str(stock), stock))) as instance:
            before = _sessions(dagster_url)
            _work(instance)
            with DagsterInstance.from_ref(instance.get_ref()) as child:  # as a run worker opens it
                pools = {type(s._engine.pool).__name__  # type: ignore[attr-defined]
                         for s in (child._run_storage, child._event_storage,
                                   child._schedule_storage)}
                _work(child)
            counts[stock] = (_sessions(dagster_url) - before, pools)
    assert counts[True][1] == {"NullPool"} and counts[False][1] == {"QueuePool"}, counts
    assert counts[True][0] >= 200, counts  # 100 reads per instance, at least one connection each
    assert counts[False][0] <= 12, counts


def test_a_dropped_or_inherited_connection_is_replaced(tmp_path: Path, dagster_url: str) -> None:
    with DagsterInstance.from_config(str(_home(tmp_path / "home", stock=False))) as instance:
        _work(instance)
        name = psycopg.conninfo.conninfo_to_dict(dagster_url)["dbname"]
        with psycopg.connect(dagster_url, autocommit=True) as conn:  # the server drops them all
            dropped = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()", (name,)).fetchone()
        assert dropped is not None and dropped[0] >= 1
        assert instance.get_runs(limit=1) == []  # pinged, reconnected
        engine = instance._run_storage._engine  # type: ignore[attr-defined]
        with engine.connect() as conn:
            parents = {conn.execute(text("SELECT pg_backend_pid()")).scalar()}
        pid = os.fork()
        if pid == 0:  # a forked process opens its own connections, never its parent's socket
            try:
                with engine.connect() as conn:
                    mine = conn.execute(text("SELECT pg_backend_pid()")).scalar()
                code = 0 if mine not in parents else 3
            except BaseException:
                code = 4
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        _work(instance)  # the parent's pooled connections still work after the child's exit


def test_each_storage_named_by_the_pooled_storage_is_pooled_on_its_own(
        tmp_path: Path, dagster_url: str) -> None:
    from assets._dagster_private import ConfigurableClassData

    url = os.environ["DAGSTER_POSTGRES_URL"]
    whole = ConfigurableClassData("fleet_pipelines.pg_storage", "PooledPostgresStorage",
                                  yaml.safe_dump({"postgres_url": url}))
    storage: Any = whole.rehydrate(as_type=object)
    for data in (storage.run_storage_data, storage.event_storage_data,
                 storage.schedule_storage_data):
        assert data.module_name == "fleet_pipelines.pg_storage", data
        part: Any = data.rehydrate(as_type=object)
        assert type(part._engine.pool).__name__ == "QueuePool", data
        with part._engine.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
        part.dispose()
    for inner in (storage.run_storage, storage.event_log_storage, storage.schedule_storage):
        inner.dispose()
