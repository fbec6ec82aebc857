"""Ledger contract for payload text that is not valid Unicode: a latin-1 file's real git diff
(decoded with ``surrogateescape``) and other lone surrogates are stored losslessly in strict JSON
that both databases (and PostgreSQL ``jsonb``) accept, read back identical, and the chain verifies;
payloads of valid text keep the hashes the ledger always gave them."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fleet.store import GENESIS, Store
from fleet.types import Cost, Grant, Verdict
from fleet.unit import UnitResult, latest_results, record_result

LATIN1_BEFORE = "# -*- coding: latin-1 -*-\nNAME = 'café'\nGREETING = 'señor'\n"
LATIN1_AFTER = "# -*- coding: latin-1 -*-\nNAME = 'crème brûlée'\nGREETING = 'señor'\n"


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
        cwd=cwd, input=stdin, capture_output=True, check=True,
    ).stdout


def _latin1_diff(tmp_path: Path) -> tuple[Path, bytes]:
    """A repo with a latin-1 file committed, and the bytes of ``git diff`` of an edit to it."""
    repo = tmp_path / "latin"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "legacy.py").write_bytes(LATIN1_BEFORE.encode("latin-1"))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "latin-1 file")
    (repo / "legacy.py").write_bytes(LATIN1_AFTER.encode("latin-1"))
    diff = _git(repo, "diff")
    _git(repo, "checkout", "-q", "--", "legacy.py")
    return repo, diff


def _old_hash(prev: str, event: dict[str, Any]) -> str:
    """The hash as the ledger has always computed it, spelled out independently of fleet code:
    SHA-256 of prev_hash + compact sorted-key JSON (non-ASCII kept as UTF-8) of the event."""
    body = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((prev + body).encode("utf-8")).hexdigest()


def _stored_payloads(store: Store) -> list[str]:
    with store.db.read() as tx:
        rows = tx.raw("SELECT payload FROM ledger ORDER BY seq").fetchall()
    return [row["payload"] for row in rows]


def test_latin1_patch_is_stored_losslessly_and_verifies(store: Store, tmp_path: Path) -> None:
    repo, diff = _latin1_diff(tmp_path)
    with pytest.raises(UnicodeDecodeError):
        diff.decode("utf-8")  # the premise: this patch is not UTF-8
    patch = diff.decode("utf-8", "surrogateescape")
    payload = {"patch": patch, "steps": [{"diff": patch, "ok": True}], "files": {"legacy.py": 1}}
    event = store.ledger.append("agent.step", payload, unit="u1", campaign="c", actor="agent")
    assert event.payload == payload
    (read,) = store.ledger.events(unit="u1")
    assert read.payload == payload and read.hash == event.hash
    assert read.payload["patch"].encode("utf-8", "surrogateescape") == diff
    assert store.ledger.verify() == []
    # what the ledger gives back is the real patch: it applies to the latin-1 file byte for byte
    _git(repo, "apply", "-", stdin=read.payload["patch"].encode("utf-8", "surrogateescape"))
    assert (repo / "legacy.py").read_bytes() == LATIN1_AFTER.encode("latin-1")


def test_what_reaches_the_database_is_strict_json(store: Store, tmp_path: Path) -> None:
    _, diff = _latin1_diff(tmp_path)
    store.ledger.append("agent.step", {"patch": diff.decode("utf-8", "surrogateescape")})
    (stored,) = _stored_payloads(store)
    stored.encode("utf-8")  # valid UTF-8 text, no lone surrogate
    assert "\\ud" not in stored.lower()  # and no surrogate escape either
    tagged = json.loads(stored)["patch"]
    assert base64.b64decode(tagged["$bytes_b64"]) == diff  # the original bytes, readable by anyone
    with store.db.read() as tx:
        if store.db.dialect == "postgres":
            check = "SELECT payload::jsonb -> 'patch' ->> '$bytes_b64' AS v FROM ledger"
        else:
            check = "SELECT json_extract(payload, '$.patch.\"$bytes_b64\"') AS v FROM ledger"
        assert tx.raw(check).fetchone()["v"] == tagged["$bytes_b64"]


def test_every_kind_of_invalid_text_round_trips(store: Store) -> None:
    payloads: list[dict[str, Any]] = [
        {"p": "caf\udce9"},  # surrogateescape-decoded latin-1
        {"p": "\ud800 lone high", "q": "\udfff lone low", "pair": "\ud83d\ude00"},
        {"p": "\udcc3\udca9"},  # escapes that would decode to a valid "é": must stay escapes
        {"caf\udce9.py": ["x", {"nested \udce9": "v\udce9"}], "ok": "héllo"},
        {"$bytes_b64": "YQ=="},  # a genuine dict that looks like a tag
        {"x": {"$escape": {"$items": []}}, "y": [{"$surrogatepass_b64": "\udce9"}]},
        {"mixed": ["\x00nul", "tab\t", "😀", None, 1.5, True, "\udce9"]},
    ]
    appended = [store.ledger.append("t", p, unit="u") for p in payloads]
    assert [e.payload for e in appended] == payloads
    assert [e.payload for e in store.ledger.events(unit="u")] == payloads
    for stored in _stored_payloads(store):
        stored.encode("utf-8")
    assert store.ledger.verify() == []


def test_valid_text_keeps_the_hashes_of_existing_ledgers(store: Store) -> None:
    payloads: list[dict[str, Any]] = [
        {"symbol": "a.py::Foo", "token": 3},
        {"text": "héllo wörld — ☃ 😀", "n": 1.5, "neg": -2, "none": None, "flag": False},
        {"nested": {"b": [1, 2, {"c": "ü"}], "a": ""}, "ctl": "\x00\t\n\"\\"},
        {},
    ]
    # an existing ledger, written with the hashes of the code before this change
    prev = GENESIS
    with store.db.write() as tx:
        for seq, payload in enumerate(payloads, start=1):
            event = {"kind": "old", "unit": "u0", "campaign": "c", "actor": "fleet",
                     "payload": payload, "created_at": 1700000000.25 + seq}
            digest = _old_hash(prev, event)
            tx.run("ledger_insert", {
                "seq": seq, "kind": "old", "unit": "u0", "campaign": "c", "actor": "fleet",
                "payload": json.dumps(payload, sort_keys=True, separators=(",", ":"),
                                      ensure_ascii=False),
                "created_at": event["created_at"], "prev_hash": prev, "hash": digest,
            })
            prev = digest
    assert store.ledger.verify() == []
    assert [e.payload for e in store.ledger.events(kind="old")] == payloads
    # new appends of valid text hash exactly as before, chained onto the old events
    for payload in payloads:
        new = store.ledger.append("new", payload, unit="u1", campaign="c")
        event = {"kind": "new", "unit": "u1", "campaign": "c", "actor": "fleet",
                 "payload": payload, "created_at": new.created_at}
        assert new.prev_hash == prev and new.hash == _old_hash(prev, event)
        prev = new.hash
    assert store.ledger.verify() == []


def test_tampering_with_a_tagged_payload_is_found(store: Store) -> None:
    store.ledger.append("t", {"p": "caf\udce9"})
    store.ledger.append("t", {"p": "ok"})
    forged = json.dumps({"p": {"$bytes_b64": base64.b64encode(b"caf\xe8").decode()}})
    with store.db.write() as tx:
        if store.db.dialect == "postgres":
            tx.raw("SET LOCAL session_replication_role = replica")
        else:
            tx.raw("DROP TRIGGER ledger_no_update")
        tx.raw(f"UPDATE ledger SET payload = '{forged}' WHERE seq = 1")
    assert store.ledger.verify() == ["seq 1: hash does not match the event's content"]
    assert store.ledger.events()[0].payload == {"p": "caf\udce8"}


def test_unit_result_with_a_latin1_patch_round_trips(store: Store, tmp_path: Path) -> None:
    """``fleet.unit``'s ``unit.finished`` record (the system of record for later stages) keeps a
    latin-1 patch, verdict evidence and details byte for byte."""
    _, diff = _latin1_diff(tmp_path)
    patch = diff.decode("utf-8", "surrogateescape")
    result = UnitResult(
        unit="u1", campaign="c", status="rejected", base_commit="0" * 40, patch=patch,
        verdicts=(Verdict("applies", "accept", "ok"),
                  Verdict("parses", "reject", f"cannot parse:\n{patch}", {"file": "l\udce9.py"})),
        grants=(Grant("l1", "legacy.py::<module>", "write", "h", 7, 1.0),),
        cost=Cost(10, 5, 0.01), detail="parses: caf\udce9", paths=("legacy.py",),
    )
    record_result(store.ledger, result, "unit:w0")
    assert latest_results(store.ledger, "c")["u1"] == result
    assert latest_results(store.ledger, "c")["u1"].patch.encode("utf-8", "surrogateescape") == diff
    assert store.ledger.verify() == []
