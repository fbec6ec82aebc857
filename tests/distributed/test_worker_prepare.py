"""A worker's preparation before a task (``fleet_pipelines.engine._prepare``), on a real git
remote (``file://``) and a real index: the mirror synced and the base indexed for the steps that
read them, the index of an unchanged base commit not redone by the same process, a new base
commit or a graph file written by anything else indexed again, and ``verified_patches`` (which
reads only the ledger) neither synced nor indexed."""

from __future__ import annotations

from pathlib import Path

from dagster._core.code_pointer import ModuleCodePointer
from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin
from dagster._grpc.types import ExecuteStepArgs
from dagster._serdes import pack_value

from fleet_pipelines.engine._prepare import prepare, step_keys
from tests.conftest import commit_files
from tests.distributed.conftest import make_target

FIX = "yaml_safe_load__candidate_patches"
VERIFIED = "yaml_safe_load__verified_patches"


def test_a_base_is_indexed_once_per_commit_and_verified_patches_skips_the_mirror(
        tmp_path: Path) -> None:
    target = make_target(tmp_path / "target", ["alpha", "beta"])
    url, home = f"file://{target}", tmp_path / "home"

    first = prepare(url, home, "main", [FIX])
    assert (first.synced, first.indexed) == (True, True)
    graph = home / "graph" / "symbol_graph.json"
    assert graph.is_file()

    again = prepare(url, home, "main", [FIX])
    assert (again.synced, again.indexed) == (True, False)

    skipped = prepare(url, home, "main", [VERIFIED])
    assert (skipped.synced, skipped.indexed) == (False, False)

    commit_files(target, {"gamma/__init__.py": "", "gamma/g.py": "def g():\n    return 1\n"},
                 "gamma")
    moved = prepare(url, home, "main", [FIX])
    assert (moved.synced, moved.indexed) == (True, True)
    assert b"gamma/g.py" in graph.read_bytes()

    graph.write_bytes(graph.read_bytes() + b" ")  # written by something else: not trusted
    rewritten = prepare(url, home, "main", None)  # steps unknown: prepared fully
    assert (rewritten.synced, rewritten.indexed) == (True, True)


def test_the_step_keys_of_a_dagster_celery_task() -> None:
    origin = JobPythonOrigin("fix_yaml_safe_load_job", RepositoryPythonOrigin(
        "python", ModuleCodePointer("fleet_pipelines.definitions", "defs", None)))
    packed = pack_value(ExecuteStepArgs(origin, "run-1", [VERIFIED]))
    assert step_keys([packed, {}]) == [VERIFIED]
    assert step_keys([]) is None
    assert step_keys(["not a task"]) is None


def test_a_warmed_worker_finds_its_first_tasks_base_indexed(tmp_path: Path) -> None:
    from fleet_pipelines.engine._prepare import warm

    target = make_target(tmp_path / "target", ["alpha"])
    url, home = f"file://{target}", tmp_path / "home"
    warmed = warm(url, home, "main")
    assert (warmed.synced, warmed.indexed) == (True, True)
    first = prepare(url, home, "main", [FIX])  # the first task, on the same base commit
    assert (first.synced, first.indexed) == (True, False)


def test_warming_up_imports_what_a_batch_imports(tmp_path: Path) -> None:
    """In a fresh interpreter, as a worker's: the agents' libcst codemods (2.8 of a first
    batch's 4.3 CPU-s when the batch imported them) are loaded by the warm-up, not by the task."""
    import subprocess
    import sys

    target = make_target(tmp_path / "target", ["alpha"])
    script = (
        "import sys\n"
        "from fleet_pipelines.engine._prepare import warm\n"
        "before = [m for m in ('libcst.codemod', 'fleet.agents.codemod', 'networkx') "
        "if m in sys.modules]\n"
        f"warm('file://{target}', __import__('pathlib').Path({str(tmp_path / 'home')!r}), "
        "'main')\n"
        "from fleet_pipelines.engine._preload import MODULES\n"
        "print('before', before)\n"
        "print('missing', [m for m in MODULES if m not in sys.modules])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "before []" in done.stdout and "missing []" in done.stdout, done.stdout
