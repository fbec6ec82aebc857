"""A unit runs only on its own repository's view of a shared store (SQLite and PostgreSQL), over
real parts: worktrees, the Claude agent loop driven by a ScriptedModel (the model is the only
double), the real gates in a real bubblewrap sandbox. Another repository's unit is refused
before anything is leased or recorded; and a unit of the same key and holder name held by
another repository (a fork at the same commit) neither blocks the run nor loses its lease to
it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.store import Store, open_store
from fleet.store.repo_scope import scoped_store
from fleet.types import Acquired, LeaseRequest
from fleet.unit import ForeignUnit, latest_results, run_unit
from sandbox import Sandbox
from tests.pipelines.test_unit_life import RATE, _agent, _env, _replace, _unit

pytestmark = [pytest.mark.sandbox]

UP, FORK = "github.com/acme/calc", "github.com/fork/calc"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = (f"sqlite:///{tmp_path / 'fleet.db'}" if request.param == "sqlite"
           else str(request.getfixturevalue("pg_dsn")))
    with open_store(url) as opened:
        yield opened


def test_a_unit_runs_only_on_its_own_repositorys_store(
    calc_repo: Path, shared: Store, bwrap: Sandbox
) -> None:
    up, fork = scoped_store(shared, UP), scoped_store(shared, FORK)
    unit = dataclasses.replace(_unit(calc_repo), repository=UP)
    with pytest.raises(ForeignUnit, match=f"belongs to '{UP}', not to the repository '{FORK}'"):
        run_unit(unit, _env(fork, calc_repo, bwrap, _agent(*_replace("def rate():\n"
                                                                      "    return 4\n"))))
    assert shared.leases.held() == [] and shared.ledger.events() == []  # nothing taken or said

    # the fork's unit of the same key holds the same symbol under the same holder name
    holder = "fleet:w0:u1"
    theirs = fork.leases.try_acquire(holder, "u1", [LeaseRequest(RATE, "write")], 120)
    assert isinstance(theirs, Acquired)
    result = run_unit(unit, _env(up, calc_repo, bwrap,
                                 _agent(*_replace("def rate():\n    return 4\n"))))
    assert result.status == "verified", result.detail  # not lease_refused
    [grant] = result.grants
    assert grant.symbol == RATE and up.leases.check_fence(RATE, grant.token)
    # the run released its own holder's leases only: the fork's lease is held, its token valid
    assert [(g.symbol, g.holder) for g in fork.leases.held()] == [(RATE, holder)]
    assert fork.leases.check_fence(RATE, theirs.grants[0].token)
    assert not fork.leases.check_fence(RATE, grant.token)
    # every event of the run is the upstream's: the fork has no result for u1
    assert {e.repo for e in shared.ledger.events(unit="u1")} == {UP}
    assert latest_results(up.ledger, "calc")["u1"].status == "verified"
    assert latest_results(fork.ledger, "calc") == {}
    assert shared.ledger.verify() == []


YAML_FILES = {
    "billing/__init__.py": "",
    "billing/legacy.py": "import yaml\n\n\ndef load_invoice(text):\n    return yaml.load(text)\n",
    "app/__init__.py": "",
    "app/config.py": "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n",
}


def test_fleet_fix_keeps_its_state_in_the_repository_it_fixes(
    tmp_path: Path, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 21 for ``fleet fix``: run from A's checkout on B, its store, units and ledger are
    B's (``B/.fleet``, claimed for B), never A's; an explicit home of another repository is
    refused in one line."""
    import json

    from fleet.campaigns.spec import load_campaign
    from fleet.home import repository_key
    from fleet.plan import plan_campaign
    from fleet_pipelines.cli import main
    from tests.conftest import git, three_repositories

    repos = three_repositories(tmp_path, YAML_FILES)
    for name in ("FLEET_HOME", "FLEET_STORE_URL", "FLEET_REPO"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(repos["A"])
    b = repos["B"]
    plan = plan_campaign(b, load_campaign("yaml-safe-load"))
    unit = next(u for u in plan.units if u.paths == ("app/config.py",))
    args = ["fix", str(b), "-c", "yaml-safe-load", "-u", unit.key, "--sandbox", "bwrap"]
    assert main(args) == 0, capsys.readouterr().err
    assert "yaml.safe_load(" in capsys.readouterr().out
    assert not (repos["A"] / ".fleet").exists()
    record = json.loads((b / ".fleet" / "repository.json").read_text())
    assert record["root"] == str(b.resolve())
    assert git(b, "status", "--porcelain") == ""  # B/.fleet is excluded from git
    with open_store(f"sqlite:///{b / '.fleet' / 'fleet.db'}") as store:
        events = store.ledger.events(unit=unit.key)
        assert events and {e.repo for e in events} == {repository_key(b)}
        assert [g.symbol for g in store.leases.held()] == []  # released
    # A's state directory given to B's fix: refused in one line naming both
    a_home = repos["A"] / ".fleet"
    a_home.mkdir()
    (a_home / "repository.json").write_text(json.dumps({"root": str(repos["A"].resolve())}))
    monkeypatch.setenv("FLEET_HOME", str(a_home))
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "belongs to the repository" in err[0], err
    assert str(b.resolve()) in err[0] and not (a_home / "fleet.db").exists()


def test_rollback_replays_its_own_repositorys_steps_of_a_shared_unit_key(
    tmp_path: Path, bwrap: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    """Upstream and fork at one commit run a unit of one key on one store, each its own edit;
    ``fleet rollback --repo R`` replays R's recorded step, never the other's."""
    from fleet.agents.rollback import STEP
    from fleet.home import repository_key
    from fleet.types import WorkUnit
    from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates
    from fleet_pipelines.cli import main
    from tests.conftest import commit_files, git
    from tests.pipelines.test_unit_life import _agent as agent

    up = tmp_path / "up"
    up.mkdir()
    git(up, "init", "-q", "-b", "main")
    commit_files(up, {"m.py": "def a():\n    return 1\n",
                      "test_m.py": "from m import a\n\n\ndef test_a():\n    assert a()\n"}, "m")
    git(up, "remote", "add", "origin", "https://github.com/acme/m.git")
    fork = tmp_path / "fork"
    git(tmp_path, "clone", "-q", str(up), str(fork))
    git(fork, "remote", "set-url", "origin", "https://github.com/fork/m.git")
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    base = git(up, "rev-parse", "HEAD").strip()
    with open_store(url) as store:
        for repo, value in ((up, "10"), (fork, "20")):
            key = repository_key(repo)
            view = scoped_store(store, key)
            unit = WorkUnit("u1", "camp", base, ("m.py::a",), (), (), repository=key)
            env = UnitEnv(leases=view.leases, ledger=view.ledger, sandbox=bwrap,
                          agent=agent(*_replace(f"def a():\n    return {value}\n", "m.py::a")),
                          workspaces=GitWorkspaces(repo), gates=VerifyGates(repo))
            assert run_unit(unit, env).status == "verified"
        assert len(store.ledger.events(unit="u1", kind=STEP)) == 4  # two per repository
    for repo, value in ((up, "10"), (fork, "20")):
        assert main(["rollback", "--unit", "u1", "--to", "0", "--repo", str(repo),
                     "--store", url]) == 0
        out = capsys.readouterr().out
        tree = Path(next(ln for ln in out.splitlines() if ln.startswith("worktree: "))
                    .removeprefix("worktree: "))
        assert (tree / "m.py").read_text() == f"def a():\n    return {value}\n", repo
