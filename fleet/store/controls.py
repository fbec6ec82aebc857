"""Controls over either database: the kill switch and atomic budget spends, plus project memory
notes that persist across units and sweeps."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from fleet.store._db import Database

__all__ = [
    "BudgetState",
    "KillState",
    "Note",
    "SqlControls",
    "SqlMemory",
    "day_scope",
    "task_scope",
]

KILL_SWITCH = "kill_switch"


def task_scope(task_id: str) -> str:
    return f"task:{task_id}"


def day_scope(at: float | None = None) -> str:
    """The budget scope of one UTC day, e.g. ``day:2026-11-30``."""
    return "day:" + time.strftime("%Y-%m-%d", time.gmtime(time.time() if at is None else at))


@dataclass(frozen=True)
class KillState:
    engaged: bool
    reason: str = ""
    since: float | None = None


@dataclass(frozen=True)
class BudgetState:
    scope: str
    usd: float
    tokens: int


class SqlControls:
    """Kill switch and budgets. Every read goes to the database, so a switch engaged by any
    process is seen by the next check of every other (loops check once per heartbeat)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def engage(self, reason: str) -> None:
        value = json.dumps({"reason": reason})
        with self.db.write() as tx:
            tx.run("control_set", {"key": KILL_SWITCH, "value": value, "now": self.db.now()})

    def release(self) -> None:
        with self.db.write() as tx:
            tx.run("control_delete", {"key": KILL_SWITCH})

    def kill_state(self) -> KillState:
        with self.db.read() as tx:
            row = tx.one("control_get", {"key": KILL_SWITCH})
        if row is None:
            return KillState(False)
        return KillState(True, json.loads(row["value"]).get("reason", ""), float(row["updated_at"]))

    def engaged(self) -> bool:
        return self.kill_state().engaged

    def spend(
        self,
        scope: str,
        amount_usd: float,
        tokens: int,
        limit_usd: float | None,
        limit_tokens: int | None,
    ) -> bool:
        """Atomically add the spend to ``scope`` if it stays within both limits (``None`` =
        unlimited); returns False and spends nothing otherwise. Scopes: :func:`task_scope`,
        :func:`day_scope`."""
        params = {
            "scope": scope,
            "usd": float(amount_usd),
            "tokens": int(tokens),
            "limit_usd": None if limit_usd is None else float(limit_usd),
            "limit_tokens": None if limit_tokens is None else int(limit_tokens),
            "now": self.db.now(),
        }
        with self.db.write() as tx:
            tx.run("budget_ensure", params)
            return tx.run("budget_spend", params) == 1

    def spent(self, scope: str) -> BudgetState:
        with self.db.read() as tx:
            row = tx.one("budget_get", {"scope": scope})
        if row is None:
            return BudgetState(scope, 0.0, 0)
        return BudgetState(scope, float(row["usd"]), int(row["tokens"]))


@dataclass(frozen=True)
class Note:
    note_id: int
    text: str
    tag: str
    author: str
    created_at: float


class SqlMemory:
    """Project memory: decisions, constraints, deadlines fed into agent prompts."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, text: str, *, tag: str = "note", author: str = "") -> Note:
        if not text.strip():
            raise ValueError("a note needs text")
        with self.db.write() as tx:
            row = tx.one(
                "note_insert", {"text": text, "tag": tag, "author": author, "now": self.db.now()}
            )
        assert row is not None
        return _note(row)

    def list(self, tag: str | None = None) -> list[Note]:
        with self.db.read() as tx:
            return [_note(row) for row in tx.all("note_list", {"tag": tag})]

    def remove(self, note_id: int) -> bool:
        with self.db.write() as tx:
            return tx.run("note_delete", {"id": int(note_id)}) == 1


def _note(row: dict[str, object]) -> Note:
    return Note(
        int(row["id"]),  # type: ignore[call-overload]
        str(row["text"]),
        str(row["tag"]),
        str(row["author"]),
        float(row["created_at"]),  # type: ignore[arg-type]
    )
