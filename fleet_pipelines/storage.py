"""The embedded Dagster instance: SQLite event log storage tuned for a batch of units per step.

Dagster's stock ``SqliteEventLogStorage`` opens a new engine and connection for every statement
group and closes it again; with the write-ahead log, closing the last connection checkpoints the
log into the database file and fsyncs it. A batch of units records ~18 events per unit (planned
events, its partition's materializations, one check evaluation per gate), each written to the
run's database and mirrored into the cross-run index, so on a busy 2-core machine those
connection round trips were most of the orchestration overhead (``benchmarks/bench_fleet.py``).

``PooledSqliteEventLogStorage`` keeps the same files and schema (the stock class and the
webserver read them unchanged) and changes three things:

- the index shard keeps one pooled connection open instead of reconnecting per write;
- every connection runs with ``PRAGMA synchronous=NORMAL`` (WAL mode): a commit no longer waits
  for an fsync. The database can't be corrupted by a crash; after a power loss the last few events
  may be missing (the fleet's own ledger, the system of record, is a separate store);
- a batch of events (the materialization and check planned events of a run's start, the
  materializations of a partition range's output, a unit's check evaluations and the verified
  units from ``assets._batch``) is written in one transaction on the run's database instead of one
  connection per event: it turns on Dagster's own batching
  (``DAGSTER_EVENT_BATCH_SIZE``, unless already set) in every process that opens this storage.

Per-run shards still connect per write: the webserver follows a live run by watching the run's
``.db`` file, which a closing connection checkpoints into.

``ensure_instance_config(dagster_home)`` writes the ``dagster.yaml`` that selects it (once; a file
that already configures storage, e.g. dagster-postgres for the shared deployment, is kept).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from assets._dagster_private import (
    ASSET_CHECK_EVENTS,
    ASSET_EVENTS,
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    ConfigurableClassData,
    DagsterEventType,
    EventLogEntry,
    SqliteEventLogStorage,
    create_engine,
)

__all__ = [
    "BATCHED",
    "EVENT_BATCH_SIZE",
    "STORAGE_KEYS",
    "PooledSqliteEventLogStorage",
    "ensure_instance_config",
    "instance_config",
]

STORAGE_KEYS = ("storage", "run_storage", "event_log_storage", "schedule_storage")
EVENT_BATCH_SIZE = "1000"
BATCHED = {*ASSET_EVENTS, *ASSET_CHECK_EVENTS} - {DagsterEventType.FRESHNESS_STATE_CHANGE}


def _no_fsync_per_commit(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` with a pooled index connection and no fsync per commit."""

    run_engines = 64  # run shards whose engine is kept (the least recently used dropped)

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._index_engine: Engine | None = None
        # the run shards' engines: NullPool, so a cached one keeps no connection (no file) open;
        # building one per connection was ~7 ms, thousands per sweep
        self._run_engines: OrderedDict[str, Engine] = OrderedDict()
        os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", EVENT_BATCH_SIZE)
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str, pooled: bool) -> Engine:
        engine = None if pooled else self._run_engines.get(shard)
        if engine is None:
            engine = create_engine(
                self.conn_string_for_shard(shard),
                poolclass=None if pooled else NullPool,
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
            )
            event.listen(engine, "connect", _no_fsync_per_commit)
            if not pooled:
                self._run_engines[shard] = engine
                if len(self._run_engines) > self.run_engines:
                    self._run_engines.popitem(last=False)[1].dispose()
        elif not pooled:
            self._run_engines.move_to_end(shard)
        if shard not in self._initialized_dbs:  # (again after wipe(), which deletes the files)
            self._initdb(engine)
            self._initialized_dbs.add(shard)
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            pooled = shard == INDEX_SHARD_NAME
            if pooled:
                if self._index_engine is None:
                    self._index_engine = self._engine(shard, pooled=True)
                engine = self._index_engine
            else:
                engine = self._engine(shard, pooled=False)
            with engine.connect() as conn, conn.begin():
                yield conn

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """The batch's rows in one transaction on the run's database, and its asset events
        mirrored into the index in one transaction (``store_event`` does the same per event)."""
        kinds = {e.dagster_event_type for e in events}
        run_ids = {e.run_id for e in events}
        if not events or len(run_ids) != 1 or not kinds <= BATCHED:
            super().store_event_batch(events)
            return
        inserts = [self.prepare_insert_event(e) for e in events]
        with self.run_connection(events[0].run_id) as conn:
            for statement in inserts:
                conn.execute(statement)
        assets = [(e, st) for e, st in zip(events, inserts, strict=True)
                  if e.dagster_event_type in ASSET_EVENTS]
        if assets:
            with self.index_transaction() as conn:
                ids = [_inserted_id(conn.execute(st)) for _, st in assets]
                self._store_asset_event_tags(conn, [e for e, _ in assets], ids)
                for (e, _), event_id in zip(assets, ids, strict=True):
                    self._store_asset_event(conn, e, event_id)
        for e, st in zip(events, inserts, strict=True):
            if e.dagster_event_type in ASSET_CHECK_EVENTS:
                with self.index_connection() as conn:
                    event_id = _inserted_id(conn.execute(st))
                self.store_asset_check_event(e, event_id)

    def wipe(self) -> None:
        self._close_index()
        super().wipe()

    def dispose(self) -> None:
        self._close_index()
        super().dispose()

    def _close_index(self) -> None:
        with self._db_lock:
            if self._index_engine is not None:
                self._index_engine.dispose()
                self._index_engine = None


def _inserted_id(result: Any) -> int:
    return int(result.inserted_primary_key[0])


def instance_config(dagster_home: Path) -> dict[str, Any]:
    """The ``dagster.yaml`` of the embedded default: telemetry off, the pooled event log, the
    steps' logs where Dagster keeps them by default (``<DAGSTER_HOME>/storage``), mirrored by a
    thread (:mod:`fleet_pipelines.compute_logs`)."""
    return {
        "telemetry": {"enabled": False},
        "event_log_storage": {
            "module": __name__,
            "class": PooledSqliteEventLogStorage.__name__,
            "config": {"base_dir": str(dagster_home.resolve() / "history" / "runs")},
        },
        "compute_logs": {
            "module": "fleet_pipelines.compute_logs",
            "class": "MirroredComputeLogManager",
            "config": {"base_dir": str(dagster_home.resolve() / "storage")},
        },
    }


def ensure_instance_config(dagster_home: Path) -> Path:
    """Write ``$DAGSTER_HOME/dagster.yaml`` for the embedded default unless it already names a
    storage (an existing file's other settings are kept). Returns its path."""
    dagster_home.mkdir(parents=True, exist_ok=True)
    path = dagster_home / "dagster.yaml"
    current: dict[str, Any] = {}
    if path.exists():
        loaded = yaml.safe_load(path.read_text())
        current = loaded if isinstance(loaded, dict) else {}
        if any(key in current for key in STORAGE_KEYS):
            return path
    path.write_text(yaml.safe_dump({**instance_config(dagster_home), **current},
                                   sort_keys=False))
    return path
