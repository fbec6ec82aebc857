"""Issue 21's three repositories with one explicit ``DAGSTER_HOME`` shared by all three (each
with its own state directory): the Dagster instance belongs to the first repository swept on it,
and the sweeps of the others are refused in one line naming both, before any run — none of A's
runs, unit partitions or asset history is touched. A repository that moved keeps its instance."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from fleet.home import HomeMismatch
from fleet_pipelines.commands._sweep import instance_for
from fleet_pipelines.instance_owner import instance_repository
from tests.conftest import git, three_repositories

CAMPAIGN = "yaml-safe-load"
FILES = {
    "app/__init__.py": "",
    "app/config.py": "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n",
    "billing/__init__.py": "",
    "billing/legacy.py": "import yaml\n\n\ndef load_invoice(text):\n    return yaml.load(text)\n",
}


def _repos(tmp_path: Path) -> dict[str, Path]:
    """A (``main``), B (``master``), C (a clone of A without ``billing/``)."""
    return three_repositories(tmp_path, FILES)


def _sweep(cwd: Path, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", "sweep", str(repo), "-c", CAMPAIGN,
         "--sandbox", "bwrap"], cwd=cwd, env=env, capture_output=True, text=True, timeout=900,
        check=False)


def _history(instance: DagsterInstance) -> tuple[int, list[str], int]:
    """Runs, the campaign's unit partitions, materializations of ``symbol_graph``."""
    graph = instance.fetch_materializations(AssetKey("symbol_graph"), limit=100)
    return (len(instance.get_runs()),
            sorted(instance.get_dynamic_partitions("yaml_safe_load_units")),
            len(graph.records))


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_three_repositories_on_one_explicit_dagster_home(
    tmp_path: Path, bwrap: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One real sweep (A's); B's and C's are refused before their first run."""
    repos = _repos(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    shared = tmp_path / "dagster"
    env = {k: v for k, v in os.environ.items() if k not in {
        "FLEET_HOME", "FLEET_STORE_URL", "FLEET_REPO", "FLEET_BASE_BRANCH", "FLEET_DEPLOYMENT"}}
    env.update(DAGSTER_HOME=str(shared), COLUMNS="200")

    done = _sweep(work, repos["A"], env)
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.setenv("DAGSTER_HOME", str(shared))
    with DagsterInstance.get() as instance:
        owner = instance_repository(instance)
        assert owner is not None and owner.root == str(repos["A"].resolve())
        before = _history(instance)
    assert before[0] >= 3 and before[1] and before[2] >= 1  # A's: index, plan, fix, ...

    for name in ("B", "C"):
        refused = _sweep(work, repos[name], env)
        assert refused.returncode == 2, (name, refused.stderr[-2000:])
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1, (name, lines)
        assert lines[0].startswith(f"error: the Dagster instance {shared.resolve()}")
        assert f"belongs to the repository {repos['A'].resolve()} (first commit" in lines[0]
        assert f"not to {repos[name].resolve()} (first commit" in lines[0]
        assert "unset DAGSTER_HOME" in lines[0]
        assert not (repos[name] / ".fleet" / "fleet.db").exists()  # no run reached its store

    with DagsterInstance.get() as instance:
        assert _history(instance) == before  # nothing of A's runs, partitions or assets moved
        owner = instance_repository(instance)
        assert owner is not None and owner.root == str(repos["A"].resolve())



def test_the_instance_records_its_repository_and_refuses_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repos = _repos(tmp_path)
    home = tmp_path / "dagster"
    monkeypatch.setenv("DAGSTER_HOME", str(home))  # instance_for sets it: put back after
    with instance_for(home, None, repos["A"]) as instance:
        first = instance_repository(instance)
    assert first is not None and first.root == str(repos["A"].resolve())
    assert first.first_commit == git(repos["A"], "rev-list", "--max-parents=0", "HEAD").strip()
    instance_for(home, None, repos["A"] / "app").dispose()  # the same repository, from inside

    with pytest.raises(HomeMismatch) as refused:
        instance_for(home, None, repos["C"])  # a clone: the same first commit, another root
    message = str(refused.value)
    assert "\n" not in message and str(repos["A"].resolve()) in message
    assert str(repos["C"].resolve()) in message
    with pytest.raises(HomeMismatch):
        instance_for(home, None, repos["B"])

    moved = tmp_path / "A-moved"  # same first commit, nothing left at the recorded root
    shutil.move(repos["A"], moved)
    with instance_for(home, None, moved) as instance:
        again = instance_repository(instance)
    assert again is not None and again.root == str(moved.resolve())
    with DagsterInstance.from_config(str(home)) as reopened:  # kept in the instance's storage
        kept = instance_repository(reopened)
    assert kept is not None and kept.root == str(moved.resolve())
