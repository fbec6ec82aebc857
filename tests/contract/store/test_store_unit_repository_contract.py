"""Work units carry their repository in the store: the ``repo`` column of the ledger row that
plans them (and of every event of that repository), on both stores; ``fleet ledger show``
prints it and narrows to it; an edited column is found by ``verify``; the migration fills the
column of rows written before it from their payload."""

from __future__ import annotations

import pytest

from fleet.store import Store, open_database, open_store
from fleet.store.audit import audit_store
from fleet.store.ledger import GENESIS, canonical_json, event_hash
from fleet.store.repo_scope import scoped_store
from fleet.store.sql import migrations
from fleet.store.sqlite import split_script
from fleet.types import WorkUnit
from fleet.unit import load_units, record_planned
from fleet_pipelines.cli import main

A, B = "github.com/acme/a", "/src/b@1c9d02e7aa41"


def _unit(key: str) -> WorkUnit:
    return WorkUnit(key, "yaml-safe-load", "a" * 40, ("app/config.py::load",), (), ())


def _rows(store: Store) -> list[tuple[str, str | None, str]]:
    with store.db.read() as tx:
        return [(r["kind"], r["unit"], r["repo"]) for r in tx.raw(
            "SELECT kind, unit, repo FROM ledger ORDER BY seq").fetchall()]


def test_planned_units_carry_their_repository(store: Store) -> None:
    record_planned(scoped_store(store, A).ledger, [_unit("ua1"), _unit("ua2")])
    record_planned(scoped_store(store, B).ledger, [_unit("ub1")])
    store.ledger.append("control.kill", {"engaged": True})  # an event of no repository
    assert _rows(store) == [("unit.planned", "ua1", A), ("unit.planned", "ua2", A),
                            ("unit.planned", "ub1", B), ("control.kill", None, "")]
    assert [e.repo for e in store.ledger.events(kind="unit.planned")] == [A, A, B]
    assert [e.unit for e in store.ledger.events(repo=B)] == ["ub1", None]
    own = scoped_store(store, A).ledger
    assert [u.key for u in load_units(own, "yaml-safe-load")] == ["ua1", "ua2"]
    assert store.ledger.verify() == []


def test_ledger_show_prints_and_narrows_to_the_repository(
    store: Store, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record_planned(scoped_store(store, A).ledger, [_unit("ua1")])
    record_planned(scoped_store(store, B).ledger, [_unit("ub1")])
    assert main(["ledger", "show", "--kind", "unit.planned", "--store", store_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert f"[{A}] yaml-safe-load ua1" in lines[0] and f"[{B}] yaml-safe-load ub1" in lines[1]
    assert main(["ledger", "show", "--repository", B, "--store", store_url]) == 0
    shown = capsys.readouterr().out
    assert "ub1" in shown and "ua1" not in shown
    assert main(["ledger", "show", "--repository", B, "--json", "--store", store_url]) == 0
    assert '"repo": "/src/b@1c9d02e7aa41"' in capsys.readouterr().out


def test_an_edited_repository_column_is_found(store: Store) -> None:
    record_planned(scoped_store(store, A).ledger, [_unit("ua1"), _unit("ua2")])
    with store.db.write() as tx:  # an attacker with the credentials: triggers off first
        if store.db.dialect == "sqlite":
            tx.raw("DROP TRIGGER ledger_no_update")
        else:
            tx.raw("DROP TRIGGER ledger_no_update_delete ON ledger")
        tx.raw(f"UPDATE ledger SET repo = '{B}' WHERE seq = 2")
    assert store.ledger.verify() == [
        f"seq 2: repo column {B!r} is not the payload's repository {A!r}"]



def test_the_migration_takes_the_repository_from_older_rows(fresh_url: str) -> None:
    """A store at the migration before the column, with rows its code wrote (hashes over the
    same body as now; one payload with a NUL, one a number as repository): ``fleet ledger
    verify`` reads it as it is, opening it migrates, the column comes from each payload, and
    the chain still verifies."""
    db = open_database(fresh_url)
    payloads = [({"key": "ua1", "repository": A}, "ua1"), ({"key": "ub1", "repository": B}, "ub1"),
                ({"engaged": True}, None), ({"repository": 7}, None),
                ({"text": "nul \x00 here", "repository": A}, "ua2")]
    sqlite = db.dialect == "sqlite"
    mark = "?" if sqlite else "%s"
    try:
        with db.write() as tx:
            tx.raw("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
                   "name TEXT NOT NULL, applied_at REAL NOT NULL)")
            for m in migrations(db.dialect):
                if m.name.endswith("ledger_repo"):
                    break
                for statement in (split_script(m.sql) if sqlite else [m.sql]):
                    tx.raw(statement)
                tx.raw(f"INSERT INTO schema_migrations VALUES ({mark}, {mark}, 0)",
                       (m.version, m.name))
            prev = GENESIS
            for seq, (payload, unit) in enumerate(payloads, start=1):
                body = canonical_json(payload)
                digest = event_hash(prev, "unit.planned", unit, "c", "planner", body, 1.0 + seq)
                tx.raw("INSERT INTO ledger (seq, kind, unit, campaign, actor, payload, "
                       f"created_at, prev_hash, hash) VALUES ({mark}, 'unit.planned', {mark}, "
                       f"'c', 'planner', {mark}, {mark}, {mark}, {mark})",
                       (seq, unit, body, 1.0 + seq, prev, digest))
                prev = digest
    finally:
        db.close()
    before = audit_store(fresh_url)  # `fleet ledger verify` reads it without migrating
    assert before.count == 5 and before.problems == []
    with open_store(fresh_url) as store:
        assert [r[2] for r in _rows(store)] == [A, B, "", "", A]
        assert store.ledger.verify() == []
        assert [e.unit for e in store.ledger.events(repo=A)] == ["ua1", None, None, "ua2"]
        store.ledger.append("t", {"text": "nul \x00 again", "repository": B})  # as inserted now
        assert _rows(store)[-1][2] == B and store.ledger.verify() == []
