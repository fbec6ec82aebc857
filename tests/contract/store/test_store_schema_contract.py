"""The versioned migrations produce exactly the schema (``schema/*.sql`` in their order), and
migrating is idempotent."""

from __future__ import annotations

from typing import Any

from fleet.store import Database, open_database, open_store
from fleet.store.sql import migrations, queries

INTROSPECT = {
    "sqlite": [
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY type, name",
    ],
    "postgres": [
        "SELECT table_name, column_name, data_type, is_nullable, column_default, collation_name "
        "FROM information_schema.columns WHERE table_schema = 'public' "
        "AND table_name <> 'schema_migrations' ORDER BY table_name, ordinal_position",
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' "
        "AND tablename <> 'schema_migrations' ORDER BY indexname",
        "SELECT tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT tgisinternal "
        "ORDER BY tgname",
        "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1",
        "SELECT conname, pg_get_constraintdef(c.oid) FROM pg_constraint c "
        "JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' "
        "AND conname NOT LIKE 'schema_migrations%' ORDER BY 1",
        "SELECT sequence_name FROM information_schema.sequences ORDER BY 1",
    ],
}


def _describe(db: Database) -> list[Any]:
    out = []
    with db.read() as tx:
        for sql in INTROSPECT[db.dialect]:
            out.append([tuple(dict(row).values()) for row in tx.raw(sql)])
    return out



def test_migrations_produce_the_schema(store_url: str, fresh_url: str) -> None:
    migrated = open_database(store_url)
    direct = open_database(fresh_url)
    try:
        applied = migrated.migrate()
        assert applied == [m.version for m in migrations(migrated.dialect)]
        assert migrated.migrate() == []  # idempotent
        direct.apply_schema()  # type: ignore[attr-defined]
        assert _describe(migrated) == _describe(direct)
        assert _describe(migrated)[0]  # really introspected something
    finally:
        migrated.close()
        direct.close()


def test_every_named_query_is_valid_sql(store_url: str) -> None:
    with open_store(store_url) as store, store.db.read() as tx:
        dialect = store.db.dialect
        for name, sql in queries(dialect).items():
            if dialect == "sqlite":
                tx.raw("EXPLAIN " + sql, _null_params(sql)).fetchall()
            else:
                tx.raw(f"PREPARE q_{name} AS " + _positional(sql))
                tx.raw(f"DEALLOCATE q_{name}")


def _null_params(sql: str) -> dict[str, None]:
    import re

    return {m: None for m in re.findall(r"(?<!:):([a-z_]+)", sql)}


def _positional(sql: str) -> str:
    import re

    names: list[str] = []

    def repl(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    return re.sub(r"%\(([a-z_]+)\)s", repl, sql)


OPENER = """
import sys, time
from fleet.store import open_store
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
with open_store(sys.argv[1]) as store:
    store.memory.add("opened")
"""


def test_many_processes_open_a_fresh_store_at_once(store_url: str) -> None:
    import subprocess
    import sys
    import time

    start_at = str(time.time() + 1.0)
    procs = [
        subprocess.Popen([sys.executable, "-c", OPENER, store_url, start_at]) for _ in range(8)
    ]
    assert [p.wait(60) for p in procs] == [0] * 8
    with open_store(store_url) as store:
        assert len(store.memory.list()) == 8
        with store.db.read() as tx:
            versions = [dict(r)["version"] for r in tx.raw("SELECT version FROM schema_migrations")]
        assert versions == [m.version for m in migrations(store.db.dialect)]
