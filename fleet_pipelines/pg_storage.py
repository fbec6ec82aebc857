"""Dagster's PostgreSQL storage with a small connection pool per process.

dagster-postgres builds its three storages (runs, events, schedules) on SQLAlchemy's
``NullPool``: every statement group opens a new connection to the server and closes it again.
On the shared deployment that is most of what PostgreSQL does: a 16-unit sweep on one worker
opened 4,014 server connections (BSD process accounting: ~250 per unit, from the event writes
of the run and celery workers, the daemon's queue and run-monitoring ticks and the sweep's
follower), and one connect + ``SELECT 1`` + close costs 1.4 ms of client CPU and ~0.75 ms of
server CPU on this machine against 0.26 ms on a pooled connection (``benchmarks/bench_engine.py``
measures the deployment's CPU per unit).

``PooledPostgresStorage`` is ``DagsterPostgresStorage`` with the same configuration, tables and
schema (the stock classes and the webserver read them unchanged), whose storages keep up to
``POOL_SIZE`` idle connections per process and open more when the threads of a process need them
(closed again when returned). A pooled connection is checked with a ping before use, so a server
restart costs one reconnect, and a process that forked is given fresh connections instead of its
parent's. A run worker or celery worker handed the instance by reference gets these classes too.

Select it in ``dagster.yaml`` (``deploy/dagster.yaml`` does)::

    storage:
      custom:
        module: fleet_pipelines.pg_storage
        class: PooledPostgresStorage
        config:
          postgres_url: {env: DAGSTER_POSTGRES_URL}
"""

from __future__ import annotations

import os
from typing import Any

from dagster_postgres import (
    DagsterPostgresStorage,
    PostgresEventLogStorage,
    PostgresRunStorage,
    PostgresScheduleStorage,
)
from dagster_postgres.utils import (
    create_pg_engine,
    get_token_provider_from_config,
    pg_url_from_config,
)
from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

from assets._dagster_private import ConfigurableClassData

__all__ = ["POOL_SIZE", "PooledEventLogStorage", "PooledPostgresStorage", "PooledRunStorage",
           "PooledScheduleStorage", "pooled_engine"]

POOL_SIZE = 2
"""Idle connections a process keeps per storage (more are opened while its threads need them)."""

MODULE = __name__


def pooled_engine(url: str, token_provider: Any = None) -> Engine:
    """An AUTOCOMMIT engine like dagster-postgres' own, on a pool of ``POOL_SIZE`` connections."""
    engine = create_pg_engine(url, token_provider, isolation_level="AUTOCOMMIT",
                              pool_size=POOL_SIZE, max_overflow=-1, pool_pre_ping=True,
                              pool_recycle=3600)
    pid = os.getpid()

    @event.listens_for(engine, "connect")
    def _remember(_dbapi: Any, record: Any) -> None:
        record.info["pid"] = os.getpid()

    @event.listens_for(engine, "checkout")
    def _not_inherited(_dbapi: Any, record: Any, proxy: Any) -> None:
        # a forked process must not share its parent's sockets: drop those, open its own
        if record.info.get("pid", pid) != os.getpid():
            record.dbapi_connection = proxy.dbapi_connection = None
            raise exc.DisconnectionError("connection belongs to another process")

    return engine


def _pool(storage: Any) -> None:
    """Swap ``storage``'s NullPool engine for a pooled one on the same URL."""
    old = storage._engine
    storage._engine = pooled_engine(storage.postgres_url, storage._token_provider)
    old.dispose()


def _args(config_value: Any) -> dict[str, Any]:
    return {"postgres_url": pg_url_from_config(config_value),
            "should_autocreate_tables": config_value.get("should_autocreate_tables", True),
            "token_provider": get_token_provider_from_config(config_value)}


class _Pooled:
    """Mixin for one of dagster-postgres' storages: its engine pooled, built from its config."""

    _engine: Engine

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _pool(self)

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None,
                          config_value: Any) -> Any:
        return cls(inst_data=inst_data, **_args(config_value))


class PooledRunStorage(_Pooled, PostgresRunStorage):
    """``PostgresRunStorage`` on a pooled engine."""


class PooledEventLogStorage(_Pooled, PostgresEventLogStorage):
    """``PostgresEventLogStorage`` on a pooled engine."""


class PooledScheduleStorage(_Pooled, PostgresScheduleStorage):
    """``PostgresScheduleStorage`` on a pooled engine."""


class PooledPostgresStorage(DagsterPostgresStorage):
    """``DagsterPostgresStorage`` (same config) whose three storages are the pooled ones."""

    def __init__(self, postgres_url: str, should_autocreate_tables: bool = True,
                 inst_data: ConfigurableClassData | None = None,
                 token_provider: Any = None) -> None:
        super().__init__(postgres_url, should_autocreate_tables, inst_data, token_provider)
        for storage in (self._run_storage, self._event_log_storage, self._schedule_storage):
            _pool(storage)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> PooledPostgresStorage:
        return cls(inst_data=inst_data, **_args(config_value))

    def _data(self, name: str) -> ConfigurableClassData | None:
        data = self.inst_data
        return ConfigurableClassData(MODULE, name, data.config_yaml) if data else None

    @property
    def event_storage_data(self) -> ConfigurableClassData | None:
        return self._data("PooledEventLogStorage")

    @property
    def run_storage_data(self) -> ConfigurableClassData | None:
        return self._data("PooledRunStorage")

    @property
    def schedule_storage_data(self) -> ConfigurableClassData | None:
        return self._data("PooledScheduleStorage")
