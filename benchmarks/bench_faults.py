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
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fleet.store import GENESIS, Store, event_hash, open_store  # noqa: E402
from fleet.store.checkpoint import Checkpoint  # noqa: E402
from fleet.types import Acquired, LeaseRequest  # noqa: E402

Row = dict[str, Any]


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout


def _repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    (repo / "billing").mkdir(parents=True)
    (repo / "billing" / "legacy.py").write_text("class Foo:\n    def bar(self): ...\n")
    (repo / "calc").mkdir()
    (repo / "calc" / "__init__.py").write_text("")
    (repo / "calc" / "rates.py").write_text("def rate():\n    return 5\n")
    (repo / f"{unicodedata.normalize('NFC', 'café')}.py").write_text("x = 1\n")
    os.symlink("billing/legacy.py", repo / "alias.py")
    os.symlink("billing", repo / "money")
    os.symlink("/etc/passwd", repo / "out.py")
    os.symlink("loop_b", repo / "loop_a")
    os.symlink("loop_a", repo / "loop_b")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


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


# ---------------------------------------------------------------- corrupted stores
def _corruptions(good: bytes) -> list[tuple[str, bytes | None]]:
    rng = random.Random(7)
    noisy = bytearray(good)
    for _ in range(200):
        noisy[rng.randrange(100, len(noisy))] = rng.randrange(256)
    header = bytearray(good)
    header[16:24] = b"\xff" * 8  # page size and format bytes
    return [
        ("missing", None),
        ("0 bytes", b""),
        ("text file", b"hello\n" * 100),
        ("header only", good[:100]),
        ("first page only", good[:4096]),
        ("half the file", good[: len(good) // 2]),
        ("random bytes in pages", bytes(noisy)),
        ("bad header fields", bytes(header)),
        ("zeroed first page", b"\0" * 4096 + good[4096:]),
        ("another SQLite database", b""),  # filled below: a database without our tables
    ]


def bench_corrupted(tmp: Path, repeat: int) -> Row:
    import sqlite3

    base = tmp / "corrupt"
    base.mkdir()
    good_path = base / "good.db"
    with open_store(f"sqlite:///{good_path}") as store:
        for i in range(300):
            store.ledger.append("step", {"i": i, "pad": "x" * 200})
    with sqlite3.connect(good_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    good = good_path.read_bytes()
    foreign = base / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (x)")
    attempts = failures = 0
    for r in range(repeat):
        for name, content in _corruptions(good):
            path = base / f"c{r}.db"
            for p in base.glob(f"c{r}.db*"):
                p.unlink()
            if name == "another SQLite database":
                content = foreign.read_bytes()
            if content is not None:
                path.write_bytes(content)
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "fleet_pipelines.cli",
                    "ledger",
                    "verify",
                    "--store",
                    str(path),
                ],
                capture_output=True,
                text=True,
                cwd=base,
                timeout=120,
            )
            after = path.read_bytes() if path.exists() else None
            err = out.stderr.strip().splitlines()
            ok = (
                out.returncode in (1, 2)
                and "Traceback" not in out.stderr
                and (out.returncode == 1 or len(err) == 1)
                and after == content
            )
            attempts += 1
            failures += not ok
            if not ok:
                print(f"  corrupted store {name!r}: exit {out.returncode} {out.stderr[-200:]}")
    return {
        "fault": "corrupted stores (10 kinds, fleet ledger verify)",
        "attempts": attempts,
        "failures": failures,
        "lost": 0,
    }


# ---------------------------------------------------------------- kill -9 of a lease holder
HOLDER = r"""
import sys, time
from fleet.store import open_store
from fleet.types import LeaseRequest
url, name = sys.argv[1], sys.argv[2]
store = open_store(url)
got = store.leases.acquire_all(name, "u", [LeaseRequest("calc/rates.py::rate", "write"),
                                           LeaseRequest("calc/rates.py::other", "write")], 1.0, 10)
print("token", got.grants[0].token, flush=True)
i = 0
while True:
    e = store.ledger.append("holder.step", {"i": i}, unit=name)
    print("event", e.seq, e.hash, flush=True)
    i += 1
    time.sleep(0.005)
"""


def bench_kill_holder(tmp: Path, repeat: int) -> Row:
    url = f"sqlite:///{tmp / 'holders.db'}"
    rng = random.Random(11)
    attempts = failures = lost = 0
    with open_store(url) as store:
        for r in range(repeat):
            child = subprocess.Popen(
                [sys.executable, "-c", HOLDER, url, f"h{r}"],
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            assert child.stdout is not None
            token = int(child.stdout.readline().split()[1])
            time.sleep(rng.uniform(0.0, 0.3))
            os.kill(child.pid, signal.SIGKILL)
            acked = [
                line.split()
                for line in child.stdout.read().splitlines()
                if line.startswith("event")
            ]
            child.wait()
            child.stdout.close()
            attempts += 1
            got = store.leases.acquire_all(
                f"next{r}", "u", [LeaseRequest("calc/rates.py::rate", "write")], 30, 5.0
            )
            stale_ok = store.leases.check_fence("calc/rates.py::rate", token)
            failures += (not isinstance(got, Acquired)) or stale_ok
            store.leases.release(f"next{r}")
            stored = {e.seq: e.hash for e in store.ledger.events(unit=f"h{r}")}
            lost += sum(1 for _, seq, digest in acked if stored.get(int(seq)) != digest)
        lost += len(store.ledger.verify())
    return {
        "fault": "kill -9 of a lease holder (random moment)",
        "attempts": attempts,
        "failures": failures,
        "lost": lost,
    }


# ---------------------------------------------------------------- kill -9 of an integration
INTEGRATOR = r"""
import sys, time
from pathlib import Path
from fleet.integrate import SuiteRun, integrate
from fleet.store import open_store
from fleet.types import Grant
from fleet.unit import UnitResult
repo, url, commit, base, token, marker = sys.argv[1:7]
def hang(tree):
    Path(marker).write_text(str(tree))
    time.sleep(60)
    return SuiteRun(True, "", 0.0)
store = open_store(url)
grant = Grant("1", "calc/rates.py::rate", "write", "t", int(token), time.time() + 60)
patch = UnitResult(unit="a", campaign="calc", status="verified", base_commit=base,
                   branch="fleet/calc/a", commit=commit, grants=(grant,))
integrate(Path(repo), [patch], base_branch="main", branch="fleet/calc/integration",
          leases=store.leases, ledger=store.ledger, run_tests=hang)
"""


def bench_kill_integration(tmp: Path, repeat: int) -> Row:
    from fleet.forge.worktree import workspace
    from fleet.unit import commit_workspace

    repo = _repo(tmp / "integ")
    url = f"sqlite:///{tmp / 'integ.db'}"
    attempts = failures = lost = 0
    with open_store(url) as store:
        base = _git(repo, "rev-parse", "main").strip()
        got = store.leases.acquire_all(
            "t", "a", [LeaseRequest("calc/rates.py::rate", "write")], 60, 5
        )
        assert isinstance(got, Acquired)
        with workspace(repo, "calc", "a", base, keep_branch=True) as ws:
            (ws.path / "calc" / "rates.py").write_text("def rate():\n    return 6\n")
            commit = commit_workspace(ws, "unit a")
        for r in range(repeat):
            before = [store.ledger.append("bench.before", {"r": r}) for _ in range(3)]
            marker = tmp / f"integ-marker-{r}"
            child = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    INTEGRATOR,
                    str(repo),
                    url,
                    commit,
                    base,
                    str(got.grants[0].token),
                    str(marker),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
            )
            deadline = time.monotonic() + 60
            while not marker.exists() and time.monotonic() < deadline and child.poll() is None:
                time.sleep(0.02)
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            subprocess.run(
                [sys.executable, "-m", "fleet_pipelines.cli", "gc", str(repo)],
                capture_output=True,
                cwd=ROOT,
                timeout=120,
            )
            trees = [
                line
                for line in _git(repo, "worktree", "list", "--porcelain").splitlines()
                if line.startswith("worktree ")
            ]
            attempts += 1
            failures += len(trees) != 1
            stored = {e.seq: e.hash for e in store.ledger.events()}
            lost += sum(1 for e in before if stored.get(e.seq) != e.hash)
    return {
        "fault": "kill -9 of an integration (during its tests) + fleet gc",
        "attempts": attempts,
        "failures": failures,
        "lost": lost,
    }


# ---------------------------------------------------------------- sandbox limits
FORKER = r"""
import os, time
out = open("forked.txt", "w")
for n in range(1, 1001):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    out.write(f"{n}\n")
    out.flush()
time.sleep(30)
"""
FLOOD = "for i in $(seq 1 8); do head -c 60000000 /dev/zero > flood$i.bin; done; true"


def bench_sandbox(tmp: Path, repeat: int) -> list[Row]:
    from sandbox import Limits, make_sandbox
    from sandbox.local import LocalSandbox

    rows = []
    forks = {"attempts": 0, "failures": 0, "lost": 0}
    floods = {"attempts": 0, "failures": 0, "lost": 0}
    names = []
    for name in ("bwrap", "gvisor", "local"):
        box = LocalSandbox(warn=False) if name == "local" else make_sandbox(name)
        if not box.probe().available:  # type: ignore[attr-defined]
            continue
        names.append(name)
        for r in range(repeat):
            work = tmp / f"sbx-{name}-{r}"
            work.mkdir()
            (work / "kept.txt").write_text("kept\n")
            if name != "local":  # local has no process isolation to test
                res = box.run(
                    [sys.executable, "-c", FORKER],
                    work,
                    timeout=90,
                    limits=Limits(processes=64, memory_bytes=1024**3),
                )
                counts = (work / "forked.txt").read_text().split()
                forked = int(counts[-1]) if counts else 0
                forks["attempts"] += 1
                forks["failures"] += res.reason.value != "killed_by_limit" or forked > 63
            quota = 100 * 1024**2
            res = box.run(
                ["/bin/sh", "-c", FLOOD],
                work,
                timeout=120,
                limits=Limits(disk_bytes=quota, file_bytes=64 * 1024**2),
            )
            written = sum(p.stat().st_size for p in work.glob("flood*.bin"))
            floods["attempts"] += 1
            floods["failures"] += res.reason.value != "killed_by_limit" or written > quota
            floods["lost"] += (work / "kept.txt").read_text() != "kept\n"
            shutil.rmtree(work, ignore_errors=True)
    fork_on = ", ".join(n for n in names if n != "local")
    rows.append({"fault": f"fork past the process limit of 64 ({fork_on})", **forks})
    rows.append({"fault": f"8 x 60 MB past a 100 MB disk quota ({', '.join(names)})", **floods})
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
