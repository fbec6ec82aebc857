"""The base tree's test runs are cached on disk (fleet/verify/_base_runs.py): keyed by what they
depend on, shared across processes (the second of two at once waits and reads the first's run),
a corrupt entry ignored with a warning and recomputed, the patched tree's runs never cached; and
what the interpreters a verdict is judged with are (``pythons.judged_environment``)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

from fleet.verify import _base_runs
from fleet.verify._base_runs import base_key, cached_base_run, environment_digest
from fleet.verify.execution import PytestRun, run_pytest
from fleet.verify.pythons import judged_environment

from .conftest import MakePatch, git

pytestmark = pytest.mark.sandbox

# One verdict of run_gates per process: what a unit of a sweep does in its own run process.
_GATES = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from fleet.verify import decide, run_gates
    from sandbox import select_sandbox
    verdicts = run_gates(Path(sys.argv[1]), Path(sys.argv[2]).read_text(), ["lib.py::total"],
                         sandbox=select_sandbox("bwrap"))
    print(json.dumps([decide(verdicts), [v.evidence for v in verdicts]]))
""")


def _entries(cache: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in cache.glob("base-runs/*/*.json")}


def _gates_in_a_process(repo: Path, patch: Path, cache: Path) -> tuple[str, list[str]]:
    env = {**os.environ, "FLEET_VERIFY_CACHE": str(cache), "FLEET_TEST_PYTHONS": "target"}
    done = subprocess.run([sys.executable, "-c", _GATES, str(repo), str(patch)], env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    outcome, evidence = json.loads(done.stdout)
    return outcome, evidence


def test_units_on_one_base_in_separate_processes_run_the_base_tests_once(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: object, tmp_path: Path
) -> None:
    from .conftest import LIB

    cache = tmp_path / "cache"
    patches = {}
    for name, body in (("a", "return sum(v for v in values)"), ("b", "return sum(list(values))"),
                       ("bad", "return sum(values) + 1")):
        patches[name] = tmp_path / f"{name}.patch"
        patches[name].write_text(make_patch({"lib.py": LIB.replace("return sum(values)", body)}))

    assert _gates_in_a_process(lib_repo, patches["a"], cache)[0] == "accept"
    [(entry, written)] = _entries(cache).items()  # the base's run, and nothing of the patch's
    stored = json.loads(entry.read_text())
    tree = git(lib_repo, "rev-parse", "HEAD^{tree}").strip()
    assert stored["key"]["tree"] == tree
    assert stored["key"]["targets"] == ["tests/test_lib.py"]
    assert stored["run"]["outcomes"]["tests/test_lib.py::tests.test_lib::test_total"] == "passed"

    # another unit on the same base, in another process: the base run is read, not repeated
    outcome, evidence = _gates_in_a_process(lib_repo, patches["b"], cache)
    assert outcome == "accept"
    assert any("3 passed before, 3 passed after" in e for e in evidence)
    assert _entries(cache) == {entry: written}

    # the patched tree is judged afresh every time: a broken total is rejected
    outcome, evidence = _gates_in_a_process(lib_repo, patches["bad"], cache)
    assert outcome == "reject"
    assert any("test_total passed before and failed after" in e for e in evidence)
    assert _entries(cache) == {entry: written}


_FILL = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from fleet.verify._base_runs import cached_base_run
    from fleet.verify.execution import run_pytest
    from sandbox import select_sandbox
    key, tree, log, started, other = json.loads(sys.argv[1]), *map(Path, sys.argv[2:6])

    def compute():
        with log.open("a") as out:
            out.write("ran\\n")
        deadline = time.monotonic() + 60
        while not other.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # the other process is waiting for this entry now
        return run_pytest(select_sandbox("bwrap"), tree, ["tests/test_lib.py"])

    started.write_text("")
    run = cached_base_run(key, compute)
    print(json.dumps(run.outcomes, sort_keys=True))
""")


def test_two_processes_filling_one_entry_at_once_run_the_tests_once(
    lib_repo: Path, bwrap_sandbox: object, tmp_path: Path
) -> None:
    cache, log = tmp_path / "cache", tmp_path / "computed"
    key = base_key(git(lib_repo, "rev-parse", "HEAD^{tree}").strip(), sys.executable, "bwrap",
                   ["tests/test_lib.py"], 300.0)
    env = {**os.environ, "FLEET_VERIFY_CACHE": str(cache)}
    one, two = tmp_path / "one-started", tmp_path / "two-started"
    procs = [subprocess.Popen([sys.executable, "-c", _FILL, json.dumps(key), str(lib_repo),
                               str(log), str(mine), str(other)], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for mine, other in ((one, two), (two, one))]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    assert log.read_text() == "ran\n"  # one ran pytest, the other waited and read its entry
    first, second = (json.loads(out) for out, _ in outs)
    assert first == second
    assert first["tests/test_lib.py::tests.test_lib::test_deposit"] == "passed"
    assert len(_entries(cache)) == 1


def test_a_corrupt_entry_is_ignored_with_a_warning_and_recomputed(
    lib_repo: Path, bwrap_sandbox: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("FLEET_VERIFY_CACHE", str(tmp_path / "cache"))
    tree = git(lib_repo, "rev-parse", "HEAD^{tree}").strip()
    key = base_key(tree, sys.executable, "bwrap", ["tests/test_lib.py"], 300.0)
    other = base_key(tree, sys.executable, "bwrap", [], 300.0)
    runs: list[PytestRun] = []

    def compute() -> PytestRun:
        runs.append(run_pytest(bwrap_sandbox, lib_repo, ["tests/test_lib.py"]))  # type: ignore[arg-type]
        return runs[-1]

    first = cached_base_run(key, compute)
    [entry] = _entries(tmp_path / "cache")
    good = entry.read_text()
    for corrupt in (good[: len(good) // 2], "[]",
                    json.dumps({"key": other, "run": json.loads(good)["run"]}),
                    json.dumps({"key": key, "run": {"outcomes": {}}})):
        _base_runs._MEMORY.clear()  # a new process: only the file is left
        entry.write_text(corrupt)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="fleet.verify._base_runs"):
            again = cached_base_run(key, compute)
        assert f"base-run cache entry {entry} is corrupt" in caplog.text
        assert "running the base tree again" in caplog.text
        assert again.outcomes == first.outcomes
        assert json.loads(entry.read_text())["key"] == key  # rewritten whole
    assert len(runs) == 5
    _base_runs._MEMORY.clear()
    caplog.clear()
    assert cached_base_run(key, compute).outcomes == first.outcomes
    assert len(runs) == 5 and not caplog.text  # a good entry is read without a word

    _base_runs._MEMORY.clear()
    old = entry.stat().st_mtime - _base_runs.MAX_AGE_S - 60
    os.utime(entry, (old, old))  # a base run of yesterday: run again (dates move), no warning
    assert cached_base_run(key, compute).outcomes == first.outcomes
    assert len(runs) == 6 and not caplog.text
    assert entry.stat().st_mtime > old + _base_runs.MAX_AGE_S

    # entries past twice that age go when their bucket is written to, their locks with them
    stale = entry.with_name("0" * 64 + ".json")
    stale.write_text(good)
    stale.with_suffix(".lock").write_text("")
    ancient = old - _base_runs.MAX_AGE_S
    os.utime(stale, (ancient, ancient))
    os.utime(entry, (ancient, ancient))
    _base_runs._MEMORY.clear()
    cached_base_run(key, compute)  # too old: run again, stored, the bucket pruned
    assert entry.is_file() and not stale.exists() and not stale.with_suffix(".lock").exists()


def test_a_run_without_a_report_is_not_kept(
    git_repo: Path, bwrap_sandbox: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLEET_VERIFY_CACHE", str(tmp_path / "cache"))
    (git_repo / "test_hang.py").write_text("import time\n\ndef test_hang():\n    time.sleep(60)\n")
    key = base_key("t" * 40, sys.executable, "bwrap", ["test_hang.py"], 3.0)
    got = cached_base_run(key, lambda: run_pytest(bwrap_sandbox, git_repo,  # type: ignore[arg-type]
                                                  ["test_hang.py"], 3.0))
    assert got.timed_out
    assert _entries(tmp_path / "cache") == {}  # a timeout is judged afresh next time


def test_the_base_type_check_is_cached_and_the_patched_one_is_not(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: object, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fleet.verify import GateOptions, run_gates

    from .conftest import LIB

    monkeypatch.setenv("FLEET_VERIFY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FLEET_TEST_PYTHONS", "target")
    typed = LIB.replace("def total(values):", "def total(values: list[int]) -> int:")
    (lib_repo / "lib.py").write_text(typed)
    (lib_repo / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n")
    git(lib_repo, "add", "-A")
    git(lib_repo, "commit", "-qm", "typed")
    options = GateOptions(fail_fast=False, skip=frozenset({"review", "impacted_tests"}))
    fine = make_patch({"lib.py": typed.replace("return sum(values)", "return sum(list(values))")})
    [got] = [v for v in run_gates(lib_repo, fine, ["lib.py::total"], sandbox=bwrap_sandbox,  # type: ignore[arg-type]
                                  options=options) if v.gate == "typecheck"]
    assert got.status == "accept", got
    [(entry, written)] = _entries(tmp_path / "cache").items()
    stored = json.loads(entry.read_text())
    assert stored["key"]["tool"] == "mypy" and stored["key"]["targets"] == ["lib.py"]
    assert stored["run"]["exit_code"] == 0

    _base_runs._MEMORY.clear()  # as another process would: the entry is read, not rewritten
    bad = make_patch({"lib.py": typed.replace("return sum(values)", "return str(sum(values))")})
    [got] = [v for v in run_gates(lib_repo, bad, ["lib.py::total"], sandbox=bwrap_sandbox,  # type: ignore[arg-type]
                                  options=options) if v.gate == "typecheck"]
    assert got.status == "reject" and "Incompatible return value type" in got.evidence
    assert _entries(tmp_path / "cache") == {entry: written}


def _venv(where: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(where)
    return where / "bin" / "python"


def _install(python: Path, name: str, version: str) -> None:
    """A distribution's metadata, as pip leaves it in site-packages."""
    [site] = python.parent.parent.glob("lib/python3*/site-packages")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_the_key_names_the_tree_the_environment_and_the_selection(tmp_path: Path) -> None:
    python = _venv(tmp_path / "env")
    key = base_key("a" * 40, str(python), "bwrap", ["tests/test_x.py"], 300.0)
    assert key is not None
    for changed in (base_key("b" * 40, str(python), "bwrap", ["tests/test_x.py"], 300.0),
                    base_key("a" * 40, sys.executable, "bwrap", ["tests/test_x.py"], 300.0),
                    base_key("a" * 40, str(python), "microvm", ["tests/test_x.py"], 300.0),
                    base_key("a" * 40, str(python), "bwrap", ["tests/test_y.py"], 300.0),
                    base_key("a" * 40, str(python), "bwrap", ["tests/test_x.py"], 60.0)):
        assert changed is not None and changed != key
    before = environment_digest(str(python))
    _install(python, "attrs", "23.1.0")  # what the tests import changed: another environment
    assert environment_digest(str(python)) != before
    assert base_key("a" * 40, str(python), "bwrap", ["tests/test_x.py"], 300.0) != key
    assert base_key("a" * 40, str(tmp_path / "nope"), "bwrap", [], 300.0) is None  # not cached


def test_what_a_verdict_is_judged_with_names_the_interpreters_and_their_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _venv(tmp_path / "a"), _venv(tmp_path / "b")
    listed = f"{first}{os.pathsep}{second}"
    seen = judged_environment(str(first), listed)
    assert [p for p, _ in seen["listed"]] == [os.path.realpath(first), os.path.realpath(second)]
    assert "present" not in seen
    _install(second, "pytest", "8.3.3")  # a listed venv got another install
    assert judged_environment(str(first), listed) != seen
    assert judged_environment(str(second), "target") != judged_environment(str(first), "target")

    monkeypatch.setenv("FLEET_PYTHONS_CACHE", str(tmp_path / "venvs"))
    floor = judged_environment(str(first), "floor")
    # every Python the plan may add is named with what it is on this machine (pyenv here)
    assert floor["present"], "no Python besides the target found on this machine"
    assert all(v.split()[0] == os.path.realpath(v.split()[0]) for v in floor["present"].values())
    # where a process keeps the venvs (its own $FLEET_HOME: a sweep, its run workers and the
    # celery workers each have one) is not what the verdict was judged with
    monkeypatch.setenv("FLEET_PYTHONS_CACHE", str(tmp_path / "other-venvs"))
    assert judged_environment(str(first), "floor") == floor
