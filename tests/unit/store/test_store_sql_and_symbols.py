"""Pure parts of the store: named SQL blocks, migrations, the symbol hierarchy, fencing rule,
request normalization and store URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.errors import ConfigError
from fleet.protocols import Controls, Memory
from fleet.store import (
    ancestors,
    conflicts,
    contains,
    default_store_url,
    descendant_range,
    open_store,
)
from fleet.store._leases import fence_holds, normalize
from fleet.store.sql import migrations, parse_queries, queries
from fleet.store.sqlite import split_script
from fleet.types import LeaseRequest


def test_parse_named_blocks() -> None:
    text = "-- header\n-- name: one\nSELECT 1;\n\n-- section\n-- name: two_b\nSELECT\n  2;\n"
    assert parse_queries(text) == {"one": "SELECT 1", "two_b": "SELECT\n  2"}
    with pytest.raises(ValueError, match="twice"):
        parse_queries("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;\n")


def test_both_dialects_define_the_same_queries() -> None:
    sqlite, postgres = set(queries("sqlite")), set(queries("postgres"))
    # dialect-specific: SQLite computes leases in Python, PostgreSQL in fleet_lease_acquire(),
    # and PostgreSQL releases one lease by its key without the row-lock step (lease_release_one)
    assert sqlite - postgres == {"lease_conflicts", "fence_next", "lease_insert", "fence_upsert"}
    assert postgres - sqlite == {"lease_acquire", "lease_release_one", "ledger_lock"}
    assert len(sqlite & postgres) > 40


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_migrations_are_numbered_from_one(dialect: str) -> None:
    found = migrations(dialect)  # type: ignore[arg-type]
    assert [m.version for m in found] == list(range(1, len(found) + 1))
    assert found[0].name == "initial"


def test_split_script_keeps_trigger_bodies_whole() -> None:
    script = (
        "-- c\nCREATE TABLE t (a INT);\nCREATE TRIGGER x BEFORE DELETE ON t\nBEGIN\n"
        "    SELECT RAISE(ABORT, 'no; never');\nEND;\n"
    )
    parts = split_script(script)
    assert len(parts) == 2 and parts[1].endswith("END;") and "no; never" in parts[1]


def test_hierarchy() -> None:
    assert ancestors("a.py::Foo.bar.baz") == ["a.py", "a.py::Foo", "a.py::Foo.bar"]
    assert ancestors("a.py::<module>") == ["a.py"]
    assert ancestors("a.py") == []
    assert descendant_range("a.py::Foo") == ("a.py::Foo.", "a.py::Foo/")
    assert descendant_range("a.py") == ("a.py::", "a.py:;")
    assert contains("a.py::Foo", "a.py::Foo.bar") and not contains("a.py::Foo", "a.py::Foobar")
    assert contains("a.py", "a.py::X") and not contains("a.py", "a.py.orig")
    assert not contains("a.py::Foo", "a.py::Foo")
    for outer, inner in [("a.py", "a.py::X.y"), ("a.py::X", "a.py::X.y.z")]:
        assert all(a in ancestors(inner) for a in [outer])
    assert conflicts("a.py::Foo", "write", "a.py::Foo.bar", "read")
    assert not conflicts("a.py::Foo", "read", "a.py::Foo.bar", "read")
    assert not conflicts("a.py::Foo", "write", "a.py::Foobar", "write")


def test_normalize_merges_and_orders() -> None:
    out = normalize(
        [
            LeaseRequest("b.py::X", "read", 2),
            LeaseRequest("a.py::Y", "read", 1),
            LeaseRequest("b.py::X", "write", 1),
        ]
    )
    assert out == [LeaseRequest("a.py::Y", "read", 1), LeaseRequest("b.py::X", "write", 1)]
    with pytest.raises(ValueError):
        normalize([LeaseRequest("a.py", "exclusive")])  # type: ignore[arg-type]


def test_fence_rule() -> None:
    assert fence_holds(5, issued=5, newest_write=5)
    assert fence_holds(5, issued=7, newest_write=5)  # a later read: nothing changed
    assert not fence_holds(5, issued=9, newest_write=9)  # a later write
    assert not fence_holds(5, issued=None, newest_write=None)  # never issued here
    assert not fence_holds(8, issued=7, newest_write=0)  # from the future


def test_store_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLEET_STORE_URL", raising=False)
    assert default_store_url(tmp_path) == f"sqlite:///{tmp_path.resolve()}/.fleet/fleet.db"
    monkeypatch.setenv("FLEET_STORE_URL", "postgresql://x/y")
    assert default_store_url(tmp_path) == "postgresql://x/y"
    with pytest.raises(ConfigError):
        open_store("sqlite:///relative.db")
    with pytest.raises(ConfigError):
        open_store("mysql://nope")
    with open_store(f"sqlite:///{tmp_path / 'deep' / 'dir' / 'fleet.db'}") as store:
        assert isinstance(store.controls, Controls) and isinstance(store.memory, Memory)
        assert (tmp_path / "deep" / "dir" / "fleet.db").exists()


def test_unreachable_postgres_is_a_store_error() -> None:
    from fleet.store import StoreUnavailable

    with pytest.raises(StoreUnavailable):
        open_store("postgresql://nobody:x@127.0.0.1:1/none?connect_timeout=2")


# Python 3.12+ warns about fork() while threads run; the point here is precisely a fork.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_opens_its_own_connections(tmp_path: Path) -> None:
    import multiprocessing

    with open_store(f"sqlite:///{tmp_path / 'f.db'}") as store:
        store.memory.add("parent")  # the parent's pool now holds a connection

        ctx = multiprocessing.get_context("fork")
        child = ctx.Process(target=_child_adds_a_note, args=(store,))
        child.start()
        child.join(30)
        assert child.exitcode == 0
        assert [n.text for n in store.memory.list()] == ["parent", "child"]


def _child_adds_a_note(store: object) -> None:
    store.memory.add("child")  # type: ignore[attr-defined]
    store.close()  # type: ignore[attr-defined]
