"""Ledger contract: the hash chain, queries, refusal of UPDATE/DELETE by the database, tampering
found by verify, and one chain under concurrent appends from many processes."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from fleet.protocols import Ledger
from fleet.store import GENESIS, AppendOnlyViolation, Store, event_hash, open_store


def test_implements_protocol(store: Store) -> None:
    assert isinstance(store.ledger, Ledger)


def test_chain_and_queries(store: Store) -> None:
    ledger = store.ledger
    t0 = time.time()
    a = ledger.append("lease.granted", {"symbol": "a.py::Foo", "token": 3}, unit="u1", campaign="c")
    b = ledger.append("agent.step", {"n": 1.5, "text": "héllo"}, unit="u1", actor="agent")
    c = ledger.append("lease.granted", {"symbol": "b.py"}, unit="u2", campaign="c")
    assert (a.seq, b.seq, c.seq) == (1, 2, 3)
    assert a.prev_hash == GENESIS and b.prev_hash == a.hash and c.prev_hash == b.hash
    assert a.hash == event_hash(
        GENESIS,
        "lease.granted",
        "u1",
        "c",
        "fleet",
        '{"symbol":"a.py::Foo","token":3}',
        a.created_at,
    )
    assert [e.seq for e in ledger.events(unit="u1")] == [1, 2]
    assert [e.seq for e in ledger.events(campaign="c")] == [1, 3]
    assert [e.seq for e in ledger.events(kind="lease.granted", campaign="c")] == [1, 3]
    assert [e.seq for e in ledger.events(since=b.created_at)] == [2, 3]
    assert [e.seq for e in ledger.events(since=t0 - 1, until=b.created_at)] == [1]
    assert ledger.events(unit="u1")[1].payload == {"n": 1.5, "text": "héllo"}
    assert ledger.verify() == []


@pytest.mark.parametrize("statement", ["UPDATE ledger SET kind = 'x'", "DELETE FROM ledger"])
def test_update_and_delete_are_refused_by_the_database(store: Store, statement: str) -> None:
    store.ledger.append("e", {"a": 1})
    with pytest.raises(AppendOnlyViolation), store.db.write() as tx:
        tx.raw(statement)
    assert len(store.ledger.events()) == 1


def _tamper(store: Store, statement: str) -> None:
    """A superuser edit that bypasses the append-only triggers."""
    with store.db.write() as tx:
        if store.db.dialect == "postgres":
            tx.raw("SET LOCAL session_replication_role = replica")
            tx.raw(statement)
        else:
            tx.raw("DROP TRIGGER ledger_no_update")
            tx.raw("DROP TRIGGER ledger_no_delete")
            tx.raw(statement)


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("UPDATE ledger SET payload = '{\"amount\":1000}' WHERE seq = 2", "seq 2: hash"),
        ("UPDATE ledger SET actor = 'mallory' WHERE seq = 3", "seq 3: hash"),
        ("DELETE FROM ledger WHERE seq = 2", "seq 3: expected seq 2"),
    ],
)
def test_tampering_is_found_by_verify(store: Store, statement: str, expected: str) -> None:
    for i in range(4):
        store.ledger.append("spend", {"amount": i}, unit="u")
    assert store.ledger.verify() == []
    _tamper(store, statement)
    problems = store.ledger.verify()
    assert any(p.startswith(expected) for p in problems), problems


def test_rehashed_forgery_still_breaks_the_chain(store: Store) -> None:
    for i in range(3):
        store.ledger.append("spend", {"amount": i})
    first = store.ledger.events()[0]
    forged = event_hash(GENESIS, "spend", None, None, "fleet", '{"amount":99}', first.created_at)
    _tamper(
        store,
        f"UPDATE ledger SET payload = '{{\"amount\":99}}', hash = '{forged}' WHERE seq = 1",
    )
    assert store.ledger.verify() == ["seq 2: prev_hash does not match the hash of the event before"]


APPENDER = """
import sys
from fleet.store import open_store
store = open_store(sys.argv[1], migrate=False)
for i in range(int(sys.argv[3])):
    store.ledger.append("race", {"writer": sys.argv[2], "i": i})
store.close()
"""


def test_concurrent_appends_from_processes_keep_one_chain(store: Store) -> None:
    store.ledger.append("start", {})
    procs = [
        subprocess.Popen([sys.executable, "-c", APPENDER, store.url, f"p{n}", "25"])
        for n in range(6)
    ]
    assert [p.wait(60) for p in procs] == [0] * 6
    events = store.ledger.events()
    assert len(events) == 1 + 6 * 25
    assert [e.seq for e in events] == list(range(1, 152))
    assert store.ledger.verify() == []


def test_url_round_trips(store_url: str) -> None:
    with open_store(store_url) as one:
        one.ledger.append("e", {})
    with open_store(store_url) as two:
        assert len(two.ledger.events()) == 1
