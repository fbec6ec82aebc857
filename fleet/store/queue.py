"""The task queue over either database: enqueue (idempotent per live ``(kind, key)``), claim
(PostgreSQL: ``FOR UPDATE SKIP LOCKED``; SQLite: under the write lock), complete, fail with a retry
count, heartbeat, and requeue of tasks whose claimant stopped heartbeating."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fleet.store._db import Database, Row
from fleet.types import Task

__all__ = ["SqlTaskQueue", "TaskRecord"]


@dataclass(frozen=True)
class TaskRecord:
    """A task with its state: ``status`` is ``queued | claimed | done | failed``."""

    task_id: str
    kind: str
    key: str
    payload: dict[str, Any]
    status: str
    attempts: int
    max_attempts: int
    claimed_by: str | None
    result: dict[str, Any] | None
    error: str | None
    created_at: float
    updated_at: float


def _task(row: Row) -> Task:
    return Task(
        task_id=str(row["id"]),
        kind=row["kind"],
        key=row["key"],
        payload=json.loads(row["payload"]),
        attempts=int(row["attempts"]),
        claimed_by=row["claimed_by"],
    )


class SqlTaskQueue:
    """A :class:`fleet.protocols.TaskQueue`. ``max_attempts`` bounds retries (a task failed that
    many times is ``failed``); ``retry_delay_s`` is how long a retried task waits before it can be
    claimed again."""

    def __init__(self, db: Database, *, max_attempts: int = 3, retry_delay_s: float = 0.0):
        self.db = db
        self.max_attempts = max_attempts
        self.retry_delay_s = retry_delay_s

    def enqueue(self, kind: str, key: str, payload: dict[str, Any]) -> str:
        params = {
            "id": uuid.uuid4().hex,
            "kind": kind,
            "key": key,
            "payload": json.dumps(payload, sort_keys=True),
            "max_attempts": self.max_attempts,
            "now": self.db.now(),
        }
        with self.db.write() as tx:
            row = tx.one("task_insert", params) or tx.one("task_live_id", params)
        if row is None:  # pragma: no cover - the live row vanished between the two statements
            return self.enqueue(kind, key, payload)
        return str(row["id"])

    def claim(self, worker: str, kinds: Sequence[str] | None = None, limit: int = 1) -> list[Task]:
        params = {
            "worker": worker,
            "kinds": self.db.list_param(None if kinds is None else list(kinds)),
            "limit": limit,
            "now": self.db.now(),
        }
        with self.db.single() as tx:
            rows = tx.all("task_claim", params)
        rows.sort(key=lambda r: (r["created_at"], r["id"]))
        return [_task(row) for row in rows]

    def complete(self, task_id: str, result: dict[str, Any] | None = None) -> None:
        """Mark a claimed task done; a task no longer claimed (requeued, failed) is left alone."""
        with self.db.single() as tx:
            tx.run(
                "task_complete",
                {"id": task_id, "result": json.dumps(result or {}), "now": self.db.now()},
            )

    def fail(self, task_id: str, error: str, retry: bool = True) -> None:
        """Back to ``queued`` while ``retry`` and attempts remain, else ``failed``."""
        with self.db.single() as tx:
            tx.run(
                "task_fail",
                {
                    "id": task_id,
                    "error": error,
                    "retry": retry,
                    "delay": self.retry_delay_s,
                    "now": self.db.now(),
                },
            )

    def heartbeat(self, worker: str) -> None:
        with self.db.single() as tx:
            tx.run("task_heartbeat", {"worker": worker, "now": self.db.now()})

    def requeue_stale(self, older_than_s: float) -> int:
        """Requeue claimed tasks whose last heartbeat is older than ``older_than_s``."""
        now = self.db.now()
        with self.db.single() as tx:
            return tx.run(
                "task_requeue_stale",
                {"cutoff": now - older_than_s, "older_than": older_than_s, "now": now},
            )

    def get(self, task_id: str) -> TaskRecord | None:
        with self.db.read() as tx:
            row = tx.one("task_get", {"id": task_id})
        if row is None:
            return None
        return TaskRecord(
            task_id=str(row["id"]),
            kind=row["kind"],
            key=row["key"],
            payload=json.loads(row["payload"]),
            status=row["status"],
            attempts=int(row["attempts"]),
            max_attempts=int(row["max_attempts"]),
            claimed_by=row["claimed_by"],
            result=None if row["result"] is None else json.loads(row["result"]),
            error=row["error"],
            created_at=float(row["created_at"]),
            updated_at=float(row["updated_at"]),
        )

    def counts(self) -> dict[str, int]:
        with self.db.read() as tx:
            return {row["status"]: int(row["n"]) for row in tx.all("task_counts")}
