"""The append-only, hash-chained ledger over either database.

Each event's ``hash`` is SHA-256 of ``prev_hash`` followed by the canonical JSON (sorted keys, no
spaces, UTF-8) of the event body: kind, unit, campaign, actor, payload and created_at. The first
event chains from :data:`GENESIS`. Appends serialize (SQLite write lock; PostgreSQL an advisory
lock), so concurrent writers from many processes keep one chain; UPDATE and DELETE are refused by
triggers in both databases; :meth:`SqlLedger.verify` recomputes the chain.

Payloads are stored as strict, valid UTF-8 JSON that both databases (and PostgreSQL ``jsonb``)
accept. A payload string that is not a sequence of Unicode scalar values -- it holds a lone
surrogate, typically bytes decoded with ``errors="surrogateescape"`` such as a latin-1 file's
diff -- cannot be UTF-8, so :func:`encode_payload` stores it losslessly as a tagged object:

- ``{"$bytes_b64": B}``: the string is ``base64(B).decode("utf-8", "surrogateescape")``, so ``B``
  are the original bytes (a latin-1 patch's real bytes);
- ``{"$surrogatepass_b64": B}``: any other lone surrogates (``B`` is the ``surrogatepass``
  UTF-8 encoding), used when the first form would not round-trip;
- ``{"$items": [[key, value], ...]}``: a dict with such a string as a key;
- ``{"$escape": {tag: value}}``: a genuine one-key dict whose key is one of these tags.

The hash covers the stored (tagged) form, and :func:`decode_payload` gives readers back the
original strings. A payload of valid strings is stored and hashed exactly as before, so existing
ledgers verify unchanged.

Each row also carries its repository in the ``repo`` column (:data:`REPOSITORY_FIELD` of the
payload, ``""`` when it has none; the insert takes it from the payload itself), so a store that
holds many repositories tells their events apart by a column, and a unit's ``unit.planned``
event says whose the unit is. The column is not hashed on its own: it must equal the hashed
payload's field, and :meth:`SqlLedger.audit` reports a row where it does not.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fleet.store._db import Database, Row
from fleet.store.checkpoint import Checkpoint, check
from fleet.types import LedgerEvent

__all__ = [
    "GENESIS",
    "REPOSITORY_FIELD",
    "LedgerAudit",
    "SqlLedger",
    "canonical_json",
    "decode_payload",
    "encode_payload",
    "event_hash",
]

GENESIS = "0" * 64
REPOSITORY_FIELD = "repository"  # the payload field naming the event's repository

_BYTES = "$bytes_b64"
_SURROGATES = "$surrogatepass_b64"
_ITEMS = "$items"
_ESCAPE = "$escape"
_TAGS = frozenset({_BYTES, _SURROGATES, _ITEMS, _ESCAPE})


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _tag_string(value: str) -> dict[str, str]:
    """The original bytes when ``value`` is bytes decoded with ``surrogateescape`` (and decodes
    back to exactly ``value``: ``"\\udcc3\\udca9"`` would come back as ``"é"``); otherwise the
    ``surrogatepass`` encoding, which round-trips any string."""
    try:
        data = value.encode("utf-8", "surrogateescape")
        if data.decode("utf-8", "surrogateescape") == value:
            return {_BYTES: base64.b64encode(data).decode("ascii")}
    except UnicodeEncodeError:
        pass  # a lone surrogate outside U+DC80..U+DCFF: not an escaped byte
    return {_SURROGATES: base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii")}


def encode_payload(value: Any) -> Any:
    """``value`` with every string that is not valid Unicode text replaced by its tagged form
    (see the module docstring); anything else is returned as ``json.dumps`` would see it, so a
    payload of valid text serializes exactly as before."""
    if isinstance(value, str):
        return value if _is_text(value) else _tag_string(value)
    if isinstance(value, dict):
        if any(isinstance(k, str) and not _is_text(k) for k in value):
            # JSON keys are strings: convert the others as json.dumps would ("1", "true", "null")
            keyed = {k if isinstance(k, str) else json.dumps(k): v for k, v in value.items()}
            order = sorted(keyed, key=lambda k: k.encode("utf-8", "surrogatepass"))
            return {_ITEMS: [[encode_payload(k), encode_payload(keyed[k])] for k in order]}
        encoded = {k: encode_payload(v) for k, v in value.items()}
        if len(encoded) == 1 and next(iter(encoded)) in _TAGS:
            return {_ESCAPE: encoded}
        return encoded
    if isinstance(value, list | tuple):
        return [encode_payload(v) for v in value]
    return value


def _untag(tag: str, body: Any) -> tuple[bool, Any]:
    """``(True, original)`` for a well-formed tagged object, ``(False, None)`` otherwise (a dict
    that merely looks like one, e.g. written before tags existed, is left as it is)."""
    try:
        if tag == _BYTES and isinstance(body, str):
            return True, base64.b64decode(body, validate=True).decode("utf-8", "surrogateescape")
        if tag == _SURROGATES and isinstance(body, str):
            return True, base64.b64decode(body, validate=True).decode("utf-8", "surrogatepass")
    except (binascii.Error, UnicodeDecodeError):
        return False, None
    if (
        tag == _ITEMS
        and isinstance(body, list)
        and all(isinstance(p, list) and len(p) == 2 for p in body)
    ):
        pairs = [(decode_payload(k), decode_payload(v)) for k, v in body]
        if all(isinstance(k, str) for k, _ in pairs):
            return True, dict(pairs)
    if tag == _ESCAPE and isinstance(body, dict):
        return True, {k: decode_payload(v) for k, v in body.items()}
    return False, None


def decode_payload(value: Any) -> Any:
    """The inverse of :func:`encode_payload` on the JSON-loaded stored form."""
    if isinstance(value, dict):
        if len(value) == 1:
            tag, body = next(iter(value.items()))
            if tag in _TAGS:
                ok, original = _untag(tag, body)
                if ok:
                    return original
        return {k: decode_payload(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_payload(v) for v in value]
    return value


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


def payload_repository(payload: Any) -> str:
    """The repository a payload names (``""``: none)."""
    value = payload.get(REPOSITORY_FIELD) if isinstance(payload, dict) else None
    return value if isinstance(value, str) else ""


def _event(row: Row) -> LedgerEvent:
    return LedgerEvent(
        seq=int(row["seq"]),
        kind=row["kind"],
        unit=row["unit"],
        campaign=row["campaign"],
        actor=row["actor"],
        payload=decode_payload(json.loads(row["payload"])),
        created_at=float(row["created_at"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
        repo=row["repo"] or "",
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
        payload_json = canonical_json(encode_payload(payload))
        repo = payload_repository(payload)
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
            seq,
            kind,
            unit,
            campaign,
            actor,
            decode_payload(json.loads(payload_json)),
            created_at,
            prev,
            digest,
            repo,
        )

    def events(
        self,
        *,
        unit: str | None = None,
        campaign: str | None = None,
        kind: str | None = None,
        since: float | None = None,
        until: float | None = None,
        repo: str | None = None,
    ) -> list[LedgerEvent]:
        """Events oldest first, narrowed by each filter given; ``repo``: that repository's
        events and those of no repository."""
        params = {"unit": unit, "campaign": campaign, "kind": kind, "since": since,
                  "until": until}
        with self.db.read() as tx:
            events = [_event(row) for row in tx.all("ledger_events", params)]
        return events if repo is None else [e for e in events if e.repo in ("", repo)]

    def head(self) -> Checkpoint:
        """The newest event's seq and hash (seq 0 and :data:`GENESIS` for an empty ledger)."""
        with self.db.read() as tx:
            last = tx.one("ledger_last")
        if last is None:
            return Checkpoint(0, GENESIS)
        return Checkpoint(int(last["seq"]), str(last["hash"]))

    def verify(self) -> list[str]:
        """Every break in the chain: a gap in ``seq``, a ``prev_hash`` that is not the previous
        event's hash, or a ``hash`` that does not match the stored event. Empty when it verifies."""
        return self.audit().problems

    def audit(self, checkpoints: Sequence[Checkpoint] = ()) -> LedgerAudit:
        """:meth:`verify`, plus each of ``checkpoints`` (heads kept outside the database) held
        against the chain: truncation and a recomputed chain break one of them. A row that
        cannot be read (a payload that is not JSON, a ``created_at`` that is not a number) is
        a problem named by its seq, never an exception."""
        problems: list[str] = []
        with self.db.read() as tx:
            rows = tx.all("ledger_rows", {})
        prev = GENESIS
        expected_seq = 1
        hashes: dict[int, str] = {}
        for row in rows:
            seq = _int(row["seq"])
            if seq is None:
                problems.append(f"row after seq {expected_seq - 1}: seq is not a number")
                continue
            if seq != expected_seq:
                problems.append(f"seq {seq}: expected seq {expected_seq} (events missing)")
            if row["prev_hash"] != prev:
                problems.append(f"seq {seq}: prev_hash does not match the hash of the event before")
            problems.extend(f"seq {seq}: {p}" for p in _row_problems(row))
            hashes[seq] = str(row["hash"])
            prev = row["hash"]
            expected_seq = seq + 1
        last = expected_seq - 1
        for checkpoint in checkpoints:
            problems.extend(check(checkpoint, hashes, last))
        head = Checkpoint(last, hashes.get(last, GENESIS))
        return LedgerAudit(count=len(rows), head=head, problems=problems)


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _row_problems(row: Row) -> list[str]:
    """What is wrong with one stored event on its own (its content against its hash)."""
    created_at = row["created_at"]
    if isinstance(created_at, bool) or not isinstance(created_at, int | float):
        return [f"created_at is not a number: {str(created_at)[:40]!r}"]
    if not all(isinstance(row[k], str) for k in ("kind", "actor", "payload", "hash")):
        return ["kind, actor, payload or hash is not text"]
    try:
        digest = event_hash(
            row["prev_hash"] if isinstance(row["prev_hash"], str) else "",
            row["kind"],
            row["unit"],
            row["campaign"],
            row["actor"],
            row["payload"],
            float(created_at),
        )
    except ValueError:
        return ["payload is not valid JSON"]
    except TypeError:
        return ["unit or campaign is not text"]
    if digest != row["hash"]:
        return ["hash does not match the event's content"]
    named = payload_repository(json.loads(row["payload"]))
    if "repo" in row and row["repo"] != named:  # a store not migrated yet has no column
        return [f"repo column {str(row['repo'])[:60]!r} is not the payload's repository "
                f"{named[:60]!r}"]
    return []


@dataclass(frozen=True)
class LedgerAudit:
    """The outcome of :meth:`SqlLedger.audit`: how many events, the head, every problem."""

    count: int
    head: Checkpoint
    problems: list[str]
