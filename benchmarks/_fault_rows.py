"""The store-file, process and sandbox rows of ``bench_faults.py`` (whose docstring says what
each counts): corrupted stores under ``fleet ledger verify``, kill -9 of a lease holder, kill -9
of an integration + ``fleet gc``, fork past the process limit and the disk quota; and the
scratch repository (``_repo``) every row builds on."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fleet.store import open_store  # noqa: E402
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
