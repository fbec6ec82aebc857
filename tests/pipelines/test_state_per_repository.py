"""Issue 21's sequence: three repositories swept one after another from one working directory —
A (branch ``main``), B (branch ``master``), C (a clone of A without ``billing/``) — with the
default state directory, with an explicit shared ``--home``, and on one shared PostgreSQL store.
Each repository's findings, units, graph snapshot and ledger stay its own: B is not given A's
base branch, and C's sweep marks none of A's findings fixed (only A's own sweep does). Every
command's refusal of another repository's state, store or snapshot, and the events from before
events named their repository: tests/unit/test_state_commands_per_repository.py and
tests/unit/test_state_snapshot_and_events.py (fast, no sweep).

A's first sweep in each test submits its runs, as users' do (queue, daemon, code server: the
sweep's settings reach the runs through their environment); the other sweeps run theirs in
process (``FLEET_ENGINE=in-process``), since what they check, each repository's state, is
decided before and outside the runs' engine (a submitted sweep of these repositories: ~60 s
here, in process ~15 s; ``tests/engine`` tests the submitted path)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.graph import ForeignSnapshot, SymbolGraph
from fleet.home import repository_key
from fleet.store import Store, open_store
from fleet.store.repo_scope import REPOSITORY_FIELD, scoped_store
from tests.conftest import git, three_repositories

# three or four sweeps each: one submitted (~60 s on 2 busy cores), the others in process (~15 s)
pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.timeout(2400)]

CAMPAIGN = "yaml-safe-load"
FILES = {
    "billing/__init__.py": "",
    "billing/legacy.py": "import yaml\n\n\ndef load_invoice(text):\n    return yaml.load(text)\n",
    "app/__init__.py": "",
    "app/config.py": "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n",
    "tests/test_config.py": ("from app.config import load_config\n\n\n"
                             "def test_config():\n    assert load_config('a: 1') == {'a': 1}\n"),
}
OWN_PATHS = {"A": {"billing/legacy.py", "app/config.py"},
             "B": {"billing/legacy.py", "app/config.py"}, "C": {"app/config.py"}}


def _repos(tmp_path: Path) -> dict[str, Path]:
    return three_repositories(tmp_path, FILES)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {
        "DAGSTER_HOME", "FLEET_HOME", "FLEET_STORE_URL", "FLEET_REPO", "FLEET_BASE_BRANCH",
        "FLEET_DEPLOYMENT", "FLEET_ENGINE"}}
    return {**env, "COLUMNS": "200", **extra}


def _engine(name: str, env: dict[str, str]) -> dict[str, str]:
    """A's sweep submits its runs (the default), the others' run in process."""
    return env if name == "A" else {**env, "FLEET_ENGINE": "in-process"}


def _sweep(cwd: Path, repo: Path, *extra: str, env: dict[str, str]
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", "sweep", str(repo), "-c", CAMPAIGN,
         "--sandbox", "bwrap", *extra], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=900, check=False)


def _own(store: Store, name: str, repo: Path) -> None:
    """Everything ``store`` shows as ``repo``'s is ``repo``'s own."""
    findings = store.findings.list(CAMPAIGN)
    assert {r.finding.path for r in findings} == OWN_PATHS[name], name
    planned = store.ledger.events(kind="unit.planned", campaign=CAMPAIGN)
    assert planned, name
    for event in planned:
        assert {f["path"] for f in event.payload["findings"]} <= OWN_PATHS[name]
        # the unit starts from a commit of this repository
        git(repo, "cat-file", "-e", f"{event.payload['base_commit']}^{{commit}}")
    integrations = store.ledger.events(kind="integration.finished", campaign=CAMPAIGN)
    assert len(integrations) == 1, name
    git(repo, "cat-file", "-e", f"{integrations[0].payload['head']}^{{commit}}")


def test_three_repositories_from_one_directory_with_the_default_home(
    tmp_path: Path, bwrap: object
) -> None:
    repos = _repos(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    env = _env()
    outs = {}
    for name, repo in repos.items():
        done = _sweep(work, repo, env=_engine(name, env))
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
        outs[name] = done.stdout
    assert not (work / ".fleet").exists()  # nothing in the directory the commands ran from
    assert "self-merge (master)" in outs["B"]  # B's own base branch, not A's "main"
    assert f"campaign {CAMPAIGN}: 1 open finding(s), 0 fixed" in outs["C"]
    for name, repo in repos.items():
        home = repo / ".fleet"
        record = json.loads((home / "repository.json").read_text())
        assert record["root"] == str(repo.resolve())
        assert git(repo, "status", "--porcelain") == ""  # the state directory is excluded
        with open_store(f"sqlite:///{home / 'fleet.db'}") as store:
            assert store.ledger.verify() == []
            assert {r.status for r in store.findings.list(CAMPAIGN)} == {"new"}  # none fixed
            _own(store, name, repo)
            tagged = {e.payload.get(REPOSITORY_FIELD) for e in store.ledger.events()}
            assert tagged <= {record["key"], None}
        # the graph snapshot is the repository's own, and no other's
        snapshot = home / "graph" / "symbol_graph.json"
        assert SymbolGraph.load(snapshot, repository=record["key"]).files
        for other in set(repos) - {name}:
            with pytest.raises(ForeignSnapshot):
                SymbolGraph.load(snapshot, repository=repository_key(repos[other]))
    assert repository_key(repos["C"]) != repository_key(repos["A"])

    # an explicit --home shared between repositories: refused in one line naming both, and
    # nothing of A's changes
    a_home = repos["A"] / ".fleet"
    before = (a_home / "fleet.db").read_bytes()
    refused = _sweep(work, repos["B"], "--home", str(a_home), env=env)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and str(repos["A"].resolve()) in lines[0]
    assert str(repos["B"].resolve()) in lines[0] and "belongs to the repository" in lines[0]
    assert (a_home / "fleet.db").read_bytes() == before
    # FLEET_HOME is the same choice as --home
    refused = _sweep(work, repos["C"], env=_env(FLEET_HOME=str(a_home)))
    assert refused.returncode == 2 and "belongs to the repository" in refused.stderr
    # a copy of A that brought A's state directory along (cp -r): refused, not shared
    copy = tmp_path / "D"
    shutil.copytree(repos["A"], copy, symlinks=True)
    refused = _sweep(work, copy, env=env)
    assert refused.returncode == 2 and "came with a copy of" in refused.stderr


@pytest.mark.postgres
def test_three_repositories_on_one_shared_postgres_store(
    tmp_path: Path, bwrap: object, pg_dsn: str
) -> None:
    repos = _repos(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    env = _env(FLEET_STORE_URL=pg_dsn)
    for name, repo in repos.items():
        done = _sweep(work, repo, env=_engine(name, env))
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
    keys = {name: repository_key(repo) for name, repo in repos.items()}
    assert len(set(keys.values())) == 3
    with open_store(pg_dsn) as shared:
        assert shared.ledger.verify() == []
        assert len(shared.findings.list(CAMPAIGN)) == 5  # 2 + 2 + 1, none merged into another
        # every event of the shared store is a repository's, or the fleet's (none here)
        assert {e.repo for e in shared.ledger.events()} == set(keys.values())
        for name, repo in repos.items():
            own = scoped_store(shared, keys[name])
            assert {r.status for r in own.findings.list(CAMPAIGN)} == {"new"}, name
            _own(own, name, repo)
        # A's own next sweep marks A's finding fixed (its main now has the app/config.py fix,
        # self-merged; billing/ has no test, so its unit was unsure and stays open), only A's:
        # the same app/config.py finding of B and of C stays open
        done = _sweep(work, repos["A"], env=_engine("A again", env))
        assert done.returncode == 0, done.stderr[-2000:]
        assert f"campaign {CAMPAIGN}: 1 open finding(s), 1 fixed" in done.stdout, done.stdout
        statuses = {(name, r.finding.path): r.status for name, k in keys.items()
                    for r in scoped_store(shared, k).findings.list(CAMPAIGN)}
        assert statuses == {("A", "app/config.py"): "fixed", ("A", "billing/legacy.py"): "known",
                            ("B", "app/config.py"): "new", ("B", "billing/legacy.py"): "new",
                            ("C", "app/config.py"): "new"}
