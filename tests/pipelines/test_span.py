"""``fleet span FILE``: a campaign that deliberately spans issue 21's three repositories (A on
``main``, B on ``master``, C a clone of A without ``billing/``). Every repository is swept with
its own state directory, Dagster instance and store view - by default its own SQLite store, or
one shared PostgreSQL store - and one report covers them all. Bad span files are refused in one
line before anything is swept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.home import repository_key
from fleet.store import open_store
from fleet.store.repo_scope import scoped_store
from tests.conftest import git, three_repositories
from tests.pipelines.test_state_per_repository import CAMPAIGN, FILES, OWN_PATHS, _env, _own

SPAN = f"campaign: {CAMPAIGN}\nrepositories:\n  - ../A\n  - ../B\n  - ../C\n"


def _span(work: Path, *extra: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", "span", "span.yaml", *extra], cwd=work,
        env=env, capture_output=True, text=True, timeout=1800, check=False)


def _work(tmp_path: Path, text: str = SPAN) -> tuple[dict[str, Path], Path]:
    repos = three_repositories(tmp_path, FILES)
    work = tmp_path / "work"
    work.mkdir()
    (work / "span.yaml").write_text(text)
    return repos, work


@pytest.mark.parametrize(("text", "expect"), [
    ("campaign: [x\n", "not YAML: line 2, column 1: expected ',' or ']'"),
    (f"campaign: {CAMPAIGN}\nrepositories: [../A]\nbranch: main\n", "unknown key(s) branch"),
    (f"campaign: {CAMPAIGN}\nrepositories: []\n", "repositories: expected a list"),
    ("repositories: [../A]\n", "campaign: expected a campaign name"),
    (f"campaign: {CAMPAIGN}\nrepositories: [../A, ../A/app]\n",
     "repositories ../A and ../A/app are one repository"),
    (f"campaign: {CAMPAIGN}\nrepositories: [../nope]\n", "repository ../nope: no such directory"),
    (f"campaign: {CAMPAIGN}\nrepositories: [https://example.com/a.git]\n",
     "a span sweeps local checkouts"),
    ("campaign: no-such-campaign\nrepositories: [../A]\n", "no-such-campaign"),
])
def test_a_bad_span_is_refused_in_one_line_before_any_sweep(
    tmp_path: Path, text: str, expect: str
) -> None:
    repos, work = _work(tmp_path, text)
    done = _span(work, env=_env())
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], lines
    assert not any((r / ".fleet").exists() for r in repos.values())


def test_a_shared_state_directory_is_refused(tmp_path: Path) -> None:
    repos, work = _work(tmp_path)
    done = _span(work, env=_env(FLEET_HOME=str(work / "state")))
    assert not any((r / ".fleet").exists() for r in repos.values())
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: fleet span sweeps every repository with its own state directory and Dagster "
        "instance: unset FLEET_HOME (a store shared by them all is FLEET_STORE_URL)")


def _check_report(work: Path, repos: dict[str, Path], stdout: str) -> dict[str, dict[str, object]]:
    # each sweep's own report comes first (the span's sweeps write to its stdout), then the one
    # report of the span
    start = stdout.index(f"span {CAMPAIGN} over 3 repositories")
    report = stdout[start:]
    assert len(report.splitlines()) == 5, report
    keys = {name: repository_key(repo) for name, repo in repos.items()}
    for name, repo in repos.items():
        line = next(ln for ln in report.splitlines() if ln.startswith(f"  {repo.resolve()} "))
        assert f"[{keys[name]}]: sweep ok; {len(OWN_PATHS[name])} open finding(s), 0 fixed" in line
    assert "total: 3 of 3 sweep(s) ok; 5 open finding(s), 0 fixed" in report
    data = json.loads((work / "span.json").read_text())
    by_name = {name: next(r for r in data["repositories"] if r["key"] == keys[name])
               for name in repos}
    for name, repo in repos.items():
        assert by_name[name]["exit_code"] == 0 and by_name[name]["planned"] >= 1
        git(repo, "cat-file", "-e", f"{by_name[name]['head']}^{{commit}}")  # its own head
    assert not (work / ".fleet").exists()
    return by_name


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_a_span_sweeps_each_repository_with_its_own_state(tmp_path: Path, bwrap: object) -> None:
    repos, work = _work(tmp_path)
    done = _span(work, "--sandbox", "bwrap", "--in-process", "--json", "span.json", env=_env())
    assert done.returncode == 0, done.stderr[-3000:]
    _check_report(work, repos, done.stdout)
    assert "self-merge (master)" in done.stdout  # B's sweep had B's own base branch
    for name, repo in repos.items():
        home = repo / ".fleet"
        assert json.loads((home / "repository.json").read_text())["root"] == str(repo.resolve())
        assert (home / "dagster").is_dir()  # its own instance
        with open_store(f"sqlite:///{home / 'fleet.db'}") as store:
            assert store.ledger.verify() == []
            _own(store, name, repo)


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timeout(2400)
def test_a_span_on_one_shared_postgres_store(tmp_path: Path, bwrap: object, pg_dsn: str) -> None:
    repos, work = _work(tmp_path)
    env = _env(FLEET_STORE_URL=pg_dsn)
    done = _span(work, "--sandbox", "bwrap", "--in-process", "--json", "span.json", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    _check_report(work, repos, done.stdout)
    with open_store(pg_dsn) as shared:
        assert shared.ledger.verify() == []
        assert len(shared.findings.list(CAMPAIGN)) == 5  # 2 + 2 + 1, each its repository's
        for name, repo in repos.items():
            _own(scoped_store(shared, repository_key(repo)), name, repo)
            assert not (repo / ".fleet" / "fleet.db").exists()  # the shared store holds it
