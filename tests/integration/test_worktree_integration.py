"""Integration's merge tree is a registered worktree: it races units safely (the worktree lock),
a kill -9 in the middle of an integration leaves nothing that ``fleet gc`` or the next
integration does not remove, and every hand-over leaves its ledger checkpoint as a git note."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from fleet.forge.worktree import workspace, workspaces_root
from fleet.integrate import SuiteRun, handover_checkpoints, integrate
from fleet.store import Store, open_store
from fleet.types import Acquired, LeaseRequest
from fleet.unit import UnitResult, commit_workspace
from tests.conftest import commit_files, git

FILES = {"calc/__init__.py": "", "calc/rates.py": "def rate():\n    return 5\n"}


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return commit_files(git_repo, FILES, "calc")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = open_store(f"sqlite:///{tmp_path / 'fleet.db'}")
    yield opened  # type: ignore[misc]
    opened.close()


def imports(tree: Path) -> SuiteRun:
    """A real test run in the merge tree: the package imports and its value holds."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "import calc.rates as r; assert r.rate() > 0"],
                          cwd=tree, capture_output=True, text=True)
    return SuiteRun(done.returncode == 0, done.stderr, time.perf_counter() - started)


def _patch(store: Store, repo: Path, key: str, value: int) -> UnitResult:
    """A verified unit: its own workspace (forge.worktree), a commit, its write grant."""
    base = git(repo, "rev-parse", "main").strip()
    got = store.leases.acquire_all(f"t:{key}", key, [LeaseRequest("calc/rates.py::rate",
                                                                  "write")], 60.0, 5.0)
    assert isinstance(got, Acquired)
    store.leases.release(f"t:{key}")
    with workspace(repo, "calc", key, base, keep_branch=True) as ws:
        (ws.path / "calc" / "rates.py").write_text(f"def rate():\n    return {value}\n")
        commit = commit_workspace(ws, f"unit {key}")
    return UnitResult(unit=key, campaign="calc", status="verified", base_commit=base,
                      branch=ws.branch, commit=commit, grants=got.grants,
                      paths=("calc/rates.py",))


def _trees(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


def test_a_hand_over_leaves_the_ledger_head_as_a_git_note(repo: Path, store: Store) -> None:
    patch = _patch(store, repo, "a", 7)
    result = integrate(repo, [patch], base_branch="main", branch="fleet/calc/integration",
                       leases=store.leases, ledger=store.ledger, run_tests=imports)
    assert result.merged == ("a",)
    [finished] = store.ledger.events(kind="integration.finished")
    [checkpoint] = handover_checkpoints(repo)
    assert (checkpoint.seq, checkpoint.hash) == (finished.seq, finished.hash)
    note = git(repo, "notes", "--ref=refs/notes/fleet-ledger", "show", result.head)
    assert note.strip() == checkpoint.text()
    assert store.ledger.audit(handover_checkpoints(repo)).problems == []
    assert _trees(repo) == [str(repo)]  # the merge tree is gone


def test_integration_races_running_units_without_breaking_either(
    repo: Path, store: Store
) -> None:
    errors: list[BaseException] = []
    base = git(repo, "rev-parse", "main").strip()
    patches = [_patch(store, repo, f"p{i}", 10 + i) for i in range(2)]

    def units(worker: int) -> None:
        try:
            for n in range(12):
                with workspace(repo, "race", f"w{worker}-{n}", base) as ws:
                    (ws.path / "calc" / "rates.py").write_text("def rate():\n    return 1\n")
                    commit_workspace(ws, f"unit w{worker}-{n}")
                    # the unit's tree is intact while integrations come and go around it
                    assert (ws.path / ".git").is_file()
                    assert git(ws.path, "status", "--porcelain") == ""
        except BaseException as exc:
            errors.append(exc)

    def integrations() -> None:
        try:
            for n in range(6):
                result = integrate(repo, patches[n % 2 :], base_branch="main",
                                   branch=f"fleet/calc/integration-{n}", leases=store.leases,
                                   ledger=store.ledger, run_tests=imports)
                assert result.merged, result
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=units, args=(w,)) for w in range(2)]
    threads.append(threading.Thread(target=integrations))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert errors == []
    assert _trees(repo) == [str(repo)]
    assert not any(workspaces_root(repo).iterdir())
    assert len(handover_checkpoints(repo)) == 6


KILLED = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from fleet.integrate import SuiteRun, integrate
    from fleet.store import open_store
    from fleet.unit import UnitResult
    from fleet.types import Grant

    repo, db, marker, commit, base, token = sys.argv[1:7]
    def hang(tree):
        Path(marker).write_text(str(tree))
        time.sleep(120)
        return SuiteRun(True, "", 0.0)
    store = open_store(f"sqlite:///{db}")
    grant = Grant("1", "calc/rates.py::rate", "write", "t:a", int(token), time.time() + 60)
    patch = UnitResult(unit="a", campaign="calc", status="verified", base_commit=base,
                       branch="fleet/calc/a", commit=commit, grants=(grant,))
    integrate(Path(repo), [patch], base_branch="main", branch="fleet/calc/integration",
              leases=store.leases, ledger=store.ledger, run_tests=hang)
    """
)


def _kill_mid_integration(repo: Path, store: Store, tmp_path: Path, patch: UnitResult) -> str:
    """Run an integration in a child process, kill -9 it while its tests run; the tree it
    leaves behind."""
    marker = tmp_path / f"marker-{time.monotonic_ns()}"
    errors = tmp_path / "child.err"
    with errors.open("wb") as err:
        child = subprocess.Popen(
            [sys.executable, "-c", KILLED, str(repo), str(tmp_path / "fleet.db"), str(marker),
             str(patch.commit), patch.base_commit, str(patch.grants[0].token)],
            stdout=subprocess.DEVNULL, stderr=err,
        )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, errors.read_text()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    tree = marker.read_text()
    assert tree in _trees(repo) and Path(tree).is_dir()  # leaked, as a crash leaves it
    return tree


def test_fleet_gc_removes_the_tree_of_a_killed_integration(
    repo: Path, store: Store, tmp_path: Path
) -> None:
    patch = _patch(store, repo, "a", 7)
    tree = _kill_mid_integration(repo, store, tmp_path, patch)
    assert Path(tree).parent.parent == workspaces_root(repo)
    out = subprocess.run([sys.executable, "-m", "fleet_pipelines.cli", "gc", str(repo)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"removed worktree {tree}" in out.stdout
    assert _trees(repo) == [str(repo)] and not Path(tree).exists()


def test_the_next_integration_removes_the_tree_of_a_killed_one(
    repo: Path, store: Store, tmp_path: Path
) -> None:
    patch = _patch(store, repo, "a", 7)
    tree = _kill_mid_integration(repo, store, tmp_path, patch)
    result = integrate(repo, [patch], base_branch="main", branch="fleet/calc/integration",
                       leases=store.leases, ledger=store.ledger, run_tests=imports)
    assert result.merged == ("a",)
    assert _trees(repo) == [str(repo)] and not Path(tree).exists()
