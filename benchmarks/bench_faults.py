"""Fault benchmark of the store, the API, the ledger, leases and integration's worktrees: each
fault class repeated a stated number of times, counting attempts / failures / data lost.

    .venv/bin/python benchmarks/bench_faults.py [--repeat 20] [--fuzz 3000] \\
        [--json benchmarks/results/bench_faults.json]
    # with FLEET_BENCH_PG_DSN=postgresql://... the alias and ledger rows also run on PostgreSQL

Rows (a failure is the fault getting through; data lost is acknowledged data that is gone):

- ``api fuzz``: requests built from the OpenAPI schema with hostile values (NaN, ±Infinity,
  1e400, lone surrogates, symlink loops, links out of the repository, control characters);
  failure = a 500 or a non-JSON answer. Data lost: ledger events appended before the fuzz that
  are gone or no longer verify after it.
- ``alias leases <store>``: one holder takes a write lease, a second asks for the same code
  under an alias (file symlink, directory symlink, NFC/NFD, ``ﬁx``/``fix``, ``Foo::bar``,
  ``./``); failure = the alias granted (two writers on one symbol).
- ``ledger edits <store>``: 11 kinds of tampering with the ledger table (triggers dropped
  first, as an attacker with the credentials would); failure = ``audit`` against the last
  checkpoint reports nothing.
- ``corrupted stores``: 10 kinds of damaged SQLite files under ``fleet ledger verify``;
  failure = a traceback, a multi-line error, exit 0, or the file changed (a fresh schema).
- ``kill -9 lease holder``: a process takes leases and appends ledger events, is killed at a
  random moment; failure = the leases not granted to the next holder after the TTL, or the
  dead holder's fencing token still valid after that; data lost = acknowledged events missing.
- ``kill -9 integration``: an integration killed while its tests run; failure = a worktree
  left after ``fleet gc``; data lost = acknowledged ledger events missing.
- ``fork past the process limit``: a program forks until refused under ``processes=64`` on
  each isolating backend that works here; failure = more than 63 children, or the run not ending
  as ``killed_by_limit``.
- ``disk quota``: 8 x 60 MB written under ``disk_bytes=100 MB`` on every backend that works here
  (the microVM is left out for time: its test is in the contract suite); failure = more than the
  quota in the worktree or the run not ``killed_by_limit``; data lost = a file that was in the
  worktree before changed.
- ``hostile files``, ``hostile merges``, ``concurrent sweeps``: ``benchmarks/_fault_inputs.py``
  says what each drives and what counts (``repeat // 4``, ``repeat // 4`` and ``repeat // 10``
  rounds; the concurrent sweeps are left out with ``--no-sweep``).
- ``kill -9 of a whole sweep``: a real ``fleet sweep``'s process tree (the command, its Dagster
  daemon, code server and run workers) killed at a random moment ``repeat // 4`` times (5 at the
  default), then a normal sweep, held against the same sweep of an untouched clone
  (``benchmarks/_fault_sweep.py``, which says what counts; ``--no-sweep`` leaves the row out:
  it takes minutes).

The corrupted-store, kill -9 (lease holder, integration) and sandbox rows are implemented in
``benchmarks/_fault_rows.py``; this file keeps the store, API, alias and ledger rows and the CLI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _fault_rows import (  # noqa: E402  (benchmarks/, the script's directory)
    Row,
    _repo,
    bench_corrupted,
    bench_kill_holder,
    bench_kill_integration,
    bench_sandbox,
)

from fleet.store import GENESIS, Store, event_hash, open_store  # noqa: E402
from fleet.store.checkpoint import Checkpoint  # noqa: E402
from fleet.types import Acquired, LeaseRequest  # noqa: E402


def _stores(tmp: Path, tag: str) -> list[tuple[str, str]]:
    urls = [("sqlite", f"sqlite:///{tmp / f'{tag}.db'}")]
    dsn = os.environ.get("FLEET_BENCH_PG_DSN")
    if dsn:
        urls.append(("postgres", _pg_scratch(dsn)))
    return urls


_PG_DBS: list[tuple[str, str]] = []


def _pg_scratch(dsn: str) -> str:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"fleet_faults_{os.getpid()}_{len(_PG_DBS)}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(dsn)
    params["dbname"] = name
    _PG_DBS.append((dsn, name))
    return make_conninfo(**params)  # type: ignore[arg-type]


def _drop_pg() -> None:
    import psycopg

    for dsn, name in _PG_DBS:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# ---------------------------------------------------------------- api fuzz
def bench_api_fuzz(tmp: Path, n: int) -> Row:
    from fastapi.testclient import TestClient
    from hypothesis import HealthCheck, given, settings
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(tmp / "hypothesis")
    sys.path.insert(0, str(ROOT / "tests" / "unit" / "api"))
    import test_api_fuzz as fuzz  # the suite's own generator: one definition of "hostile"

    from fleet.api import create_app

    repo = _repo(tmp / "fuzz")
    attempts, failures = 0, 0
    with open_store(f"sqlite:///{tmp / 'fuzz.db'}") as store:
        token, _ = store.tokens.create("bench", ["leases", "jobs", "admin"])
        before = [store.ledger.append("bench.before", {"i": i}) for i in range(20)]
        with TestClient(create_app(store, repo), raise_server_exceptions=False) as client:
            spec = client.get("/openapi.json").json()

            @settings(
                max_examples=n,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(fuzz._request(spec))
            def one(request: tuple[str, str, str]) -> None:
                nonlocal attempts, failures
                method, path, body = request
                headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
                got = client.request(
                    method, path, content=body.encode() if body else None, headers=headers
                )
                attempts += 1
                try:
                    got.json()
                    ok = got.status_code < 500
                except ValueError:
                    ok = False
                failures += 0 if ok else 1

            one()
        store.controls.release()
        events = {e.seq: e.hash for e in store.ledger.events()}
        lost = sum(1 for e in before if events.get(e.seq) != e.hash)
        lost += len(store.ledger.verify())
    return {
        "fault": "api fuzz (schema-driven hostile requests)",
        "attempts": attempts,
        "failures": failures,
        "lost": lost,
    }


# ---------------------------------------------------------------- alias leases
NFC, NFD = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
ALIASES = [
    ("billing/legacy.py::Foo.bar", "alias.py::Foo.bar"),
    ("billing/legacy.py::Foo.bar", "money/legacy.py::Foo.bar"),
    ("billing/legacy.py::Foo.bar", "billing/legacy.py::Foo::bar"),
    ("billing/legacy.py::Foo", "./billing//legacy.py::Foo"),
    (f"m.py::{NFC}", f"m.py::{NFD}"),
    (f"{NFC}.py::x", f"{NFD}.py::x"),  # the file exists NFC-named; asked NFD
    ("m.py::fix", "m.py::\ufb01x"),
    ("m.py::Foo", "m.py::Foo::bar"),
]


def bench_aliases(tmp: Path, repeat: int) -> list[Row]:
    repo = _repo(tmp / "alias")
    rows = []
    for kind, url in _stores(tmp, "alias"):
        attempts = failures = 0
        with open_store(url, repo_root=repo) as store:
            for r in range(repeat):
                for held, alias in ALIASES:
                    first = store.leases.try_acquire(
                        f"A{r}", "u", [LeaseRequest(held, "write")], 30
                    )
                    assert isinstance(first, Acquired)
                    second = store.leases.try_acquire(
                        f"B{r}", "u", [LeaseRequest(alias, "write")], 30
                    )
                    attempts += 1
                    failures += isinstance(second, Acquired)
                    store.leases.release(f"A{r}")
                    store.leases.release(f"B{r}")
        rows.append(
            {
                "fault": f"alias leases ({kind}, {len(ALIASES)} alias kinds)",
                "attempts": attempts,
                "failures": failures,
                "lost": 0,
            }
        )
    return rows


# ---------------------------------------------------------------- ledger edits
def _unguard(store: Store) -> None:
    with store.db.write() as tx:
        if store.db.dialect == "sqlite":
            tx.raw("DROP TRIGGER IF EXISTS ledger_no_update")
            tx.raw("DROP TRIGGER IF EXISTS ledger_no_delete")
        else:
            tx.raw("DROP TRIGGER IF EXISTS ledger_no_update_delete ON ledger")
            tx.raw("DROP TRIGGER IF EXISTS ledger_no_truncate ON ledger")


def _rehash(store: Store, edit: Callable[[list[Row]], list[Row]]) -> None:
    """Apply ``edit`` to the rows and rewrite the whole table with a chain that verifies."""
    params = {"unit": None, "campaign": None, "kind": None, "since": None, "until": None}
    with store.db.write() as tx:
        rows = edit([dict(r) for r in tx.all("ledger_events", params)])
        tx.raw("DELETE FROM ledger")
        prev = GENESIS
        ph = "?" if store.db.dialect == "sqlite" else "%s"
        for seq, row in enumerate(rows, 1):
            digest = event_hash(
                prev,
                row["kind"],
                row["unit"],
                row["campaign"],
                row["actor"],
                row["payload"],
                float(row["created_at"]),
            )
            tx.raw(
                "INSERT INTO ledger (seq, kind, unit, campaign, actor, payload, created_at, "
                f"prev_hash, hash) VALUES ({', '.join([ph] * 9)})",
                (
                    seq,
                    row["kind"],
                    row["unit"],
                    row["campaign"],
                    row["actor"],
                    row["payload"],
                    row["created_at"],
                    prev,
                    digest,
                ),
            )
            prev = digest


def _sql(statement: str) -> Callable[[Store], None]:
    def run(store: Store) -> None:
        with store.db.write() as tx:
            tx.raw(statement)

    return run


def _edit_payload(rows: list[Row]) -> list[Row]:
    rows[10]["payload"] = json.dumps({"i": -1})
    return rows


TAMPERS: list[tuple[str, Callable[[Store], None]]] = [
    ("delete newest", _sql("DELETE FROM ledger WHERE seq > 30")),
    ("delete one in the middle", _sql("DELETE FROM ledger WHERE seq = 12")),
    ("edit a payload", _sql("UPDATE ledger SET payload = '{\"i\":-1}' WHERE seq = 7")),
    ("edit a kind", _sql("UPDATE ledger SET kind = 'other' WHERE seq = 3")),
    ("non-JSON payload", _sql("UPDATE ledger SET payload = 'not json' WHERE seq = 5")),
    ("edit created_at", _sql("UPDATE ledger SET created_at = created_at + 1 WHERE seq = 9")),
    ("delete all", _sql("DELETE FROM ledger")),
    ("edit + recompute the chain", lambda s: _rehash(s, _edit_payload)),
    ("drop newest + recompute", lambda s: _rehash(s, lambda rows: rows[:25])),
    ("drop one + recompute", lambda s: _rehash(s, lambda rows: rows[:5] + rows[6:])),
    (
        "swap two + recompute",
        lambda s: _rehash(s, lambda rows: [*rows[:3], rows[4], rows[3], *rows[5:]]),
    ),
]


def bench_ledger(tmp: Path, repeat: int) -> list[Row]:
    rows = []
    for kind, url in _stores(tmp, "ledger"):
        attempts = failures = 0
        for r in range(repeat):
            for name, tamper in TAMPERS:
                target = url
                if kind == "sqlite":
                    target = url.replace(".db", f"-{r}-{name.replace(' ', '_')}.db")
                with open_store(target) as store:
                    _unguard(store)
                    with store.db.write() as tx:
                        tx.raw("DELETE FROM ledger")
                    for i in range(40):
                        store.ledger.append("step", {"i": i, "r": r}, unit=f"u{i % 4}")
                    checkpoint: Checkpoint = store.ledger.head()
                    tamper(store)
                    problems = store.ledger.audit([checkpoint]).problems
                attempts += 1
                failures += not problems
        rows.append(
            {
                "fault": f"ledger edits ({kind}, {len(TAMPERS)} kinds)",
                "attempts": attempts,
                "failures": failures,
                "lost": 0,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="repetitions of each fault")
    parser.add_argument("--fuzz", type=int, default=3000, help="API fuzz requests")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--no-sweep", action="store_true",
                        help="leave out the kill -9 of a whole sweep (the slow row)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fleet-bench-faults-"))
    rows: list[Row] = []
    started = time.perf_counter()
    try:
        rows.append(bench_api_fuzz(tmp, args.fuzz))
        rows += bench_aliases(tmp, args.repeat)
        rows += bench_ledger(tmp, max(1, args.repeat // 4))
        rows.append(bench_corrupted(tmp, max(1, args.repeat // 10)))
        rows.append(bench_kill_holder(tmp, args.repeat))
        rows.append(bench_kill_integration(tmp, max(1, args.repeat // 2)))
        rows += bench_sandbox(tmp, max(1, args.repeat // 4))
        from _fault_inputs import bench_concurrent_sweeps, bench_hostile_files, bench_hostile_merges

        rows.append(bench_hostile_files(tmp, max(1, args.repeat // 4)))
        rows.append(bench_hostile_merges(tmp, max(1, args.repeat // 4)))
        if not args.no_sweep:
            rows.append(bench_concurrent_sweeps(tmp, max(1, args.repeat // 10)))
            from _fault_sweep import bench_kill_sweep

            rows.append(bench_kill_sweep(tmp, max(1, args.repeat // 4)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        _drop_pg()
    width = max(len(r["fault"]) for r in rows)
    print(f"{'fault':<{width}}  attempts  failures  lost")
    for r in rows:
        print(f"{r['fault']:<{width}}  {r['attempts']:>8}  {r['failures']:>8}  {r['lost']:>4}")
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.json:
        args.json.write_text(
            json.dumps({"rows": rows, "repeat": args.repeat, "fuzz": args.fuzz}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
