"""The forking run launcher's fork server loads once what every run worker used to load again
(fleet_pipelines/engine/_preload.py): the steps' lazy imports, and alembic's script directory of
Dagster's migrations. Each check runs in a fresh interpreter: the preload patches alembic in
the process that imports it (the fork server), never in this one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD_MODULES = """
import multiprocessing, sys
from fleet_pipelines.engine.run_launcher import PRELOAD

def report(queue):
    import gc
    from fleet_pipelines.engine._preload import MODULES
    queue.put(([m for m in MODULES if m not in sys.modules],
               [m for m in ("networkx", "libcst", "alembic") if m in sys.modules],
               (gc.isenabled(), gc.get_freeze_count())))

if __name__ == "__main__":
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    queue = context.Queue()
    child = context.Process(target=report, args=(queue,))
    child.start()
    missing, loaded, (collector, frozen) = queue.get(timeout=240)
    child.join()
    print("parent has networkx:", "networkx" in sys.modules)
    print("missing:", missing)
    print("loaded:", loaded)
    print("collector on:", collector)
    print("frozen:", frozen)
"""

ALEMBIC = """
import tempfile, time
from alembic.script import ScriptDirectory
from dagster._core.storage.runs.sqlite.sqlite_run_storage import __file__ as storage_file
from dagster._core.storage.sql import get_alembic_config
from dagster import DagsterInstance

config = get_alembic_config(storage_file)
fresh = ScriptDirectory.from_config(config)
assert ScriptDirectory.from_config(config) is not fresh  # alembic reads the scripts each time
head = fresh.as_revision_number("head")
import fleet_pipelines.engine._preload  # noqa: F401  (as the fork server does)
kept = ScriptDirectory.from_config(config)
assert ScriptDirectory.from_config(get_alembic_config(storage_file)) is kept
assert kept.as_revision_number("head") == head
start = time.process_time()
for _ in range(4):
    ScriptDirectory.from_config(config).as_revision_number("head")
print("4 head lookups, CPU-s:", round(time.process_time() - start, 3))
with tempfile.TemporaryDirectory() as home:  # an instance opens and checks its schema as before
    with DagsterInstance.local_temp(home) as instance:
        assert instance.get_runs() == []
print("head:", head)
"""


def _python(script: str, tmp_path: Path) -> str:
    path = tmp_path / "script.py"  # a file: the fork server's children import its __main__
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_forked_run_worker_starts_with_the_steps_imports(tmp_path: Path) -> None:
    out = _python(CHILD_MODULES, tmp_path)
    assert "missing: []" in out, out
    assert "loaded: ['networkx', 'libcst', 'alembic']" in out, out
    assert "parent has networkx: False" in out, out  # the launcher's own process is unchanged
    # the fork server imported it all with the cyclic collector off and froze it: its children
    # never walk those objects (a run worker turns the collector on: run_launcher._run)
    assert "collector on: False" in out, out
    assert int(out.split("frozen:")[1].split()[0]) > 100_000, out


def test_alembic_reads_dagsters_migrations_once_and_instances_still_open(
        tmp_path: Path) -> None:
    out = _python(ALEMBIC, tmp_path)
    lookups = float(out.split("4 head lookups, CPU-s:")[1].split()[0])
    assert lookups < 0.05, out  # 4 x ~0.15 CPU-s without the kept script directory
    assert "head:" in out
