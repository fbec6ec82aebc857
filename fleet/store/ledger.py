"""The append-only, hash-chained ledger over either database.

Each event's ``hash`` is SHA-256 of ``prev_hash`` followed by the canonical JSON (sorted keys, no
spaces, UTF-8) of the event body: kind, unit, campaign, actor, payload and created_at. The first
event chains from :data:`GENESIS`. Appends serialize (SQLite write lock; PostgreSQL an advisory
lock), so concurrent writers from many processes keep one chain; UPDATE and DELETE are refused by
triggers in both databases; :meth:`SqlLedger.verify` recomputes the chain.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fleet.store._db import Database, Row
from fleet.types import LedgerEvent

__all__ = ["GENESIS", "SqlLedger", "canonical_json", "event_hash"]

GENESIS = "0" * 64


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(
    prev_hash: str,
    kind: str,
    unit: str | None,
    campaign: str | None,
    actor: str,
    payload_json: str,
    created_at: float,
) -> str:
    body = canonical_json(
        {
            "kind": kind,
            "unit": unit,
            "campaign": campaign,
            "actor": actor,
            "payload": json.loads(payload_json),
            "created_at": created_at,
        }
    )
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def _event(row: Row) -> LedgerEvent:
    return LedgerEvent(
        seq=int(row["seq"]),
        kind=row["kind"],
        unit=row["unit"],
        campaign=row["campaign"],
        actor=row["actor"],
        payload=json.loads(row["payload"]),
        created_at=float(row["created_at"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )


class SqlLedger:
    """A :class:`fleet.protocols.Ledger`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def append(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        unit: str | None = None,
        campaign: str | None = None,
        actor: str = "fleet",
    ) -> LedgerEvent:
        payload_json = canonical_json(payload)
        with self.db.write() as tx:
            if "ledger_lock" in self.db.sql:
                tx.one("ledger_lock")
            last = tx.one("ledger_last")
            seq = 1 if last is None else int(last["seq"]) + 1
            prev = GENESIS if last is None else last["hash"]
            created_at = self.db.now()
            digest = event_hash(prev, kind, unit, campaign, actor, payload_json, created_at)
            tx.run(
                "ledger_insert",
                {
                    "seq": seq,
                    "kind": kind,
                    "unit": unit,
                    "campaign": campaign,
                    "actor": actor,
                    "payload": payload_json,
                    "created_at": created_at,
                    "prev_hash": prev,
                    "hash": digest,
                },
            )
        return LedgerEvent(
            seq, kind, unit, campaign, actor, json.loads(payload_json), created_at, prev, digest
        )

    def events(
        self,
        *,
        unit: str | None = None,
        campaign: str | None = None,
        kind: str | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> list[LedgerEvent]:
        params = {"unit": unit, "campaign": campaign, "kind": kind, "since": since, "until": until}
        with self.db.read() as tx:
            return [_event(row) for row in tx.all("ledger_events", params)]

    def verify(self) -> list[str]:
        """Every break in the chain: a gap in ``seq``, a ``prev_hash`` that is not the previous
        event's hash, or a ``hash`` that does not match the stored event. Empty when it verifies."""
        problems: list[str] = []
        params = {"unit": None, "campaign": None, "kind": None, "since": None, "until": None}
        with self.db.read() as tx:
            rows = tx.all("ledger_events", params)
        prev = GENESIS
        expected_seq = 1
        for row in rows:
            seq = int(row["seq"])
            if seq != expected_seq:
                problems.append(f"seq {seq}: expected seq {expected_seq} (events missing)")
            if row["prev_hash"] != prev:
                problems.append(f"seq {seq}: prev_hash does not match the hash of the event before")
            try:
                digest = event_hash(
                    row["prev_hash"],
                    row["kind"],
                    row["unit"],
                    row["campaign"],
                    row["actor"],
                    row["payload"],
                    float(row["created_at"]),
                )
            except ValueError:
                problems.append(f"seq {seq}: payload is not valid JSON")
                digest = ""
            if digest != row["hash"]:
                problems.append(f"seq {seq}: hash does not match the event's content")
            prev = row["hash"]
            expected_seq = seq + 1
        return problems
