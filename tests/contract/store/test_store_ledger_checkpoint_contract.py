"""Tampering the hash chain cannot hide, on both stores: a checkpoint of the head kept outside
the database finds deleted newest events and a chain recomputed after an edit; unreadable rows
(a payload that is not JSON, a text ``created_at``) are problems named by seq, never a crash;
and auditing a store that is not there, empty or not a store is one ``StoreError`` line that
creates nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleet.errors import StoreError
from fleet.store import GENESIS, Store, event_hash, open_store
from fleet.store.audit import audit_store
from fleet.store.checkpoint import Checkpoint, parse_checkpoints


def _fill(store: Store, n: int) -> None:
    for i in range(n):
        store.ledger.append("step", {"i": i}, unit=f"u{i % 3}", campaign="c")


def _unguard(store: Store) -> None:
    """What an attacker with the database's credentials does first."""
    with store.db.write() as tx:
        if store.db.dialect == "sqlite":
            tx.raw("DROP TRIGGER ledger_no_update")
            tx.raw("DROP TRIGGER ledger_no_delete")
        else:
            tx.raw("DROP TRIGGER ledger_no_update_delete ON ledger")


def _recompute_from(store: Store, seq: int) -> None:
    """Edit event ``seq`` and rewrite every later hash so that the chain verifies again."""
    with store.db.write() as tx:
        rows = tx.all(
            "ledger_events",
            {"unit": None, "campaign": None, "kind": None, "since": None, "until": None},
        )
        prev = GENESIS
        for row in rows:
            if row["seq"] >= seq:
                payload = json.dumps({"i": -1}) if row["seq"] == seq else row["payload"]
                digest = event_hash(
                    prev,
                    row["kind"],
                    row["unit"],
                    row["campaign"],
                    row["actor"],
                    payload,
                    float(row["created_at"]),
                )
                ph = "?" if store.db.dialect == "sqlite" else "%s"
                tx.raw(
                    f"UPDATE ledger SET payload = {ph}, prev_hash = {ph}, hash = {ph} "
                    f"WHERE seq = {ph}",
                    (payload, prev, "tmp-" + digest, row["seq"]),
                )
                row = {**row, "hash": digest}
            prev = row["hash"]
        tx.raw("UPDATE ledger SET hash = substr(hash, 5) WHERE hash LIKE 'tmp-%'")


def test_the_head_checkpoint_holds_on_an_untouched_ledger(store: Store) -> None:
    assert store.ledger.head() == Checkpoint(0, GENESIS)
    _fill(store, 5)
    head = store.ledger.head()
    assert head.seq == 5 and head.hash == store.ledger.events()[-1].hash
    audit = store.ledger.audit([head, Checkpoint(2, store.ledger.events()[1].hash)])
    assert audit.problems == [] and audit.count == 5 and audit.head == head
    assert parse_checkpoints(head.text(), "x") == [Checkpoint(5, head.hash, "x")]


def test_deleting_the_newest_events_is_found_by_the_checkpoint(store: Store) -> None:
    _fill(store, 12)
    checkpoint = store.ledger.head()
    _unguard(store)
    with store.db.write() as tx:
        tx.raw("DELETE FROM ledger WHERE seq > 8")
    assert store.ledger.verify() == []  # the chain alone cannot tell
    problems = store.ledger.audit([checkpoint]).problems
    assert problems == [
        "checkpoint: the ledger ends at seq 8 but had reached seq 12 (events deleted)"
    ]


def test_a_recomputed_chain_is_found_by_the_checkpoint(store: Store) -> None:
    _fill(store, 10)
    checkpoint = store.ledger.head()
    _unguard(store)
    _recompute_from(store, 4)
    assert store.ledger.events()[3].payload == {"i": -1}
    assert store.ledger.verify() == []  # every hash recomputed: the chain verifies
    problems = store.ledger.audit([checkpoint]).problems
    assert len(problems) == 1 and "event seq 10 has hash" in problems[0]
    assert "the chain was rewritten" in problems[0]


def test_a_payload_that_is_not_json_is_a_problem_not_a_crash(store: Store) -> None:
    _fill(store, 3)
    _unguard(store)
    with store.db.write() as tx:
        tx.raw("UPDATE ledger SET payload = 'not json {' WHERE seq = 2")
    audit = store.ledger.audit()
    assert audit.count == 3
    assert "seq 2: payload is not valid JSON" in audit.problems


def test_an_unknown_checkpoint_source_is_named(store: Store) -> None:
    _fill(store, 2)
    wrong = Checkpoint(2, "f" * 64, "ck.txt")
    assert store.ledger.audit([wrong]).problems[0].startswith("checkpoint ck.txt: event seq 2")


def test_audit_store_reads_without_migrating(store_url: str) -> None:
    with open_store(store_url) as store:
        _fill(store, 4)
    audit = audit_store(store_url)
    assert audit.count == 4 and audit.problems == []


def test_a_store_without_the_schema_is_one_line_and_stays_empty(
    store_url: str, tmp_path: Path
) -> None:
    if store_url.startswith("sqlite:///"):
        import sqlite3

        path = Path(store_url[len("sqlite:///") :])
        sqlite3.connect(path).execute("CREATE TABLE other (x)").connection.commit()
    with pytest.raises(StoreError, match="not a fleet store") as caught:
        audit_store(store_url)
    assert "\n" not in str(caught.value)
    # nothing was created: still no ledger table
    with pytest.raises(StoreError, match=r"no (ledger or )?schema_migrations"):
        audit_store(store_url)


def test_a_text_created_at_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    # Only SQLite can hold text in the REAL column (PostgreSQL's is double precision).
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    with open_store(url) as store:
        _fill(store, 3)
        _unguard(store)
        with store.db.write() as tx:
            tx.raw("UPDATE ledger SET created_at = 'yesterday' WHERE seq = 3")
    audit = audit_store(url)
    assert audit.problems == ["seq 3: created_at is not a number: 'yesterday'"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no fleet store at"),
        (b"", r"is empty \(0 bytes\)"),
        (b"hello, not a database\n" * 10, "is not a SQLite database"),
        (b"SQLite format 3\x00" + b"\xff" * 4000, "file is not a database"),
    ],
)
def test_a_missing_empty_or_corrupted_sqlite_file_is_one_line(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "fleet.db"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(StoreError, match=message) as caught:
        audit_store(f"sqlite:///{path}")
    assert "\n" not in str(caught.value)
    assert (path.read_bytes() if path.exists() else None) == content  # untouched
