"""The ``kill -9 of a whole sweep`` row of ``bench_faults.py``.

A real ``fleet sweep`` (campaign ``yaml-safe-load``, bwrap sandbox, the default state directory
and Dagster instance inside the repository, every run submitted to the instance's queue and
daemon) of a small repository is killed ``n`` times at a random moment: its whole process tree
(the command, the Dagster daemon it started, the code server and run workers) is frozen with
SIGSTOP and then killed with SIGKILL, so nothing it started gets to clean up. Then one normal
sweep runs. The same sweep on an untouched clone (same commits, so the same unit keys) is the
reference.

- attempts: the kills (a sweep that ends before its moment is not one: the next moment is
  drawn within the time that sweep took, until ``n`` sweeps were killed);
- failures: a sweep that ended on its own with an error (the state left by an earlier kill
  broke it), a process of a killed tree still alive after the kill, the normal
  sweep failing or running past its timeout, its outcome unlike the reference's (unit statuses,
  the tree of ``main`` after the self-merge and of the integration branch), a worktree left
  behind, a ledger that does not verify;
- data lost: ledger events (seq and hash) seen after a kill that are gone or changed at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = "yaml-safe-load"
FILES = {
    "app/__init__.py": "",
    "app/config.py": "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n",
    "app/plans.py": "import yaml\n\n\ndef load_plans(text):\n    return yaml.load(text) or {}\n",
    "tests/__init__.py": "",
    "tests/test_config.py": ("from app.config import load_config\nfrom app.plans import "
                             "load_plans\n\n\ndef test_config():\n    assert load_config('a: 1') "
                             "== {'a': 1}\n\n\ndef test_plans():\n    assert load_plans('') == "
                             "{}\n"),
}
SWEEP_TIMEOUT_S = 900.0


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True).stdout


def _target(tmp: Path) -> tuple[Path, Path]:
    """The repository to kill sweeps of, and an untouched clone of it for the reference."""
    repo = tmp / "swept"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    reference = tmp / "reference"
    _git(tmp, "clone", "-q", str(repo), str(reference))
    _git(reference, "remote", "remove", "origin")  # a plain checkout, like the other
    return repo, reference


def _env() -> dict[str, str]:
    drop = {"DAGSTER_HOME", "FLEET_HOME", "FLEET_STORE_URL", "FLEET_REPO", "FLEET_BASE_BRANCH",
            "FLEET_DEPLOYMENT"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "COLUMNS": "200"}


def _start(repo: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "fleet_pipelines.cli", "sweep", str(repo), "-c", CAMPAIGN,
         "--sandbox", "bwrap"], cwd=repo.parent, env=_env(), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, start_new_session=True)


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _tree(pid: int) -> set[int]:
    children, found, todo = _children(), set(), [pid]
    while todo:
        p = todo.pop()
        if p not in found:
            found.add(p)
            todo.extend(children.get(p, []))
    return found


def _signal(pids: set[int], sig: int) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, sig)


def _kill_tree(proc: subprocess.Popen[bytes]) -> int:
    """SIGSTOP the whole tree (twice: a fork in between is caught), then SIGKILL it; the
    number of its processes still alive 5 s later."""
    frozen: set[int] = set()
    for _ in range(2):
        pids = _tree(proc.pid) - frozen
        _signal(pids, signal.SIGSTOP)
        frozen |= pids
    frozen |= _tree(proc.pid)
    _signal(frozen, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        alive = {p for p in frozen if Path(f"/proc/{p}").exists()
                 and "Z" not in _state(p)}
        if not alive:
            return 0
        time.sleep(0.1)
    return len(alive)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def _sweep(repo: Path) -> tuple[bool, float]:
    """A normal sweep: (exit 0 within the timeout, seconds)."""
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fleet_pipelines.cli", "sweep", str(repo), "-c", CAMPAIGN,
             "--sandbox", "bwrap"], cwd=repo.parent, env=_env(), capture_output=True,
            timeout=SWEEP_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return False, time.perf_counter() - t0
    if done.returncode != 0:
        print(done.stderr.decode(errors="replace")[-1500:], file=sys.stderr)
    return done.returncode == 0, time.perf_counter() - t0


def _ledger(repo: Path) -> dict[int, str]:
    from fleet.store import open_store

    db = repo / ".fleet" / "fleet.db"
    if not db.is_file():
        return {}
    with open_store(f"sqlite:///{db}", migrate=False) as store:
        return {e.seq: e.hash for e in store.ledger.events()}


def _outcome(repo: Path) -> dict[str, Any]:
    """What the sweep left: unit statuses, main's and the integration branch's trees, the
    worktrees, whether the ledger verifies."""
    from fleet.store import open_store

    with open_store(f"sqlite:///{repo / '.fleet' / 'fleet.db'}") as store:
        last = {e.unit: e.payload["status"]  # as recorded (not re-judged in this process)
                for e in store.ledger.events(kind="unit.finished", campaign=CAMPAIGN)}
        statuses = sorted(last.values())
        problems = store.ledger.verify()
    integration = f"fleet/{CAMPAIGN}/integration"
    trees = [line for line in _git(repo, "worktree", "list", "--porcelain").splitlines()
             if line.startswith("worktree ")]
    return {"statuses": statuses, "main": _git(repo, "rev-parse", "main^{tree}").strip(),
            "integration": _git(repo, "rev-parse", f"{integration}^{{tree}}").strip(),
            "worktrees": len(trees), "ledger_problems": len(problems)}


def bench_kill_sweep(tmp: Path, n: int, seed: int = 17) -> dict[str, Any]:
    repo, reference = _target(tmp)
    ok, reference_s = _sweep(reference)
    if not ok:
        raise SystemExit("the reference sweep failed: the row cannot be measured")
    expected = _outcome(reference)
    rng = random.Random(seed)
    attempts = failures = kills = starts = 0
    seen: dict[int, str] = {}
    moments = []
    window = reference_s  # a sweep after a finished one has less to do: the window shrinks
    while kills < n and starts < 3 * n:
        moment = rng.uniform(0.5, window)
        moments.append(round(moment, 1))
        proc = _start(repo)
        started = time.monotonic()
        starts += 1
        while time.monotonic() < started + moment and proc.poll() is None:
            time.sleep(0.05)
        ended = proc.poll()
        if ended is not None:  # finished (or failed) before its moment came: not a kill
            failures += ended != 0
            window = max(1.0, time.monotonic() - started)
            proc.wait()
        else:
            kills += 1
            attempts += 1
            failures += _kill_tree(proc) > 0
        assert proc.stderr is not None
        proc.stderr.close()
        seen.update(_ledger(repo))
    ok, final_s = _sweep(repo)
    failures += not ok
    got = _outcome(repo) if ok else {}
    failures += sum(1 for k, v in expected.items() if got.get(k) != v)
    stored = _ledger(repo)
    lost = sum(1 for seq, digest in seen.items() if stored.get(seq) != digest)
    print(json.dumps({"moments_s": moments, "starts": starts, "killed": kills,
                      "reference_s": round(reference_s, 1),
                      "final_s": round(final_s, 1), "expected": expected, "got": got}),
          file=sys.stderr)
    return {"fault": f"kill -9 of a whole fleet sweep (process tree, random moment) x {n}, "
                     "then a normal sweep", "attempts": attempts, "failures": failures,
            "lost": lost}


if __name__ == "__main__":  # this row alone: python benchmarks/_fault_sweep.py [N]
    import shutil
    import tempfile

    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="fleet-bench-kill-sweep-"))
    try:
        print(json.dumps(bench_kill_sweep(tmp, int(sys.argv[1]) if len(sys.argv) > 1 else 5)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
