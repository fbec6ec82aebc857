"""Issue 21, every command that takes a repository: its default state is the repository's own
(``REPO/.fleet``, whatever the working directory), and another repository's state directory
(``--home`` / ``$FLEET_HOME``), a SQLite store kept in one (``--store`` / ``$FLEET_STORE_URL``)
or a graph snapshot of another repository is refused in one line naming both, exit 2, before
anything of either is read or written. A, B (branch ``master``) and C (a clone of A without
``billing/``) as in the issue; the commands run in this process (``fleet_pipelines.cli.main``),
except ``serve``, which would serve for ever if it were not refused."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.home import claim_home, repository_key
from fleet.store import open_store
from fleet.store.repo_scope import scoped_store
from fleet_pipelines.cli import main
from tests.conftest import three_repositories

FILES = {"billing/__init__.py": "", "billing/legacy.py": "import yaml\n\n\n"
         "def load_invoice(text):\n    return yaml.load(text)\n",
         "app/__init__.py": "", "app/config.py": "import yaml\n\n\n"
         "def load_config(text):\n    return yaml.load(text)\n"}
CLEAN = ("FLEET_HOME", "FLEET_STORE_URL", "FLEET_REPO", "FLEET_BASE_BRANCH", "DAGSTER_HOME",
         "ANTHROPIC_API_KEY")


@pytest.fixture
def repos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    for name in CLEAN:
        monkeypatch.delenv(name, raising=False)
    found = three_repositories(tmp_path, FILES)
    home = found["A"] / ".fleet"
    claim_home(home, found["A"])
    with open_store(f"sqlite:///{home / 'fleet.db'}") as raw:  # A's store, with a unit of A's
        scoped_store(raw, repository_key(found["A"])).ledger.append(
            "unit.planned", {"key": "u1", "write_set": ["app/config.py::load_config"]},
            unit="u1", campaign="yaml-safe-load")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return found


def _digest(home: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(home.rglob("*"))
                                   if p.is_file())).hexdigest()


def _commands(repo: Path, patch: Path) -> list[list[str]]:
    r = str(repo)
    return [
        ["plan", r, "-c", "yaml-safe-load"],
        ["fix", r, "-c", "yaml-safe-load", "-u", "u1", "--sandbox", "bwrap"],
        ["verify", r, str(patch), "--unit", "u1", "--sandbox", "bwrap"],
        ["rollback", "--repo", r, "--unit", "u1", "--to", "0"],
        ["task", "make it safe", "app/config.py", "--repo", r, "--sandbox", "bwrap"],
        ["ledger", "verify", "--repo", r],
        ["sweep", r, "-c", "yaml-safe-load", "--sandbox", "bwrap", "--in-process"],
    ]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], mine: Path,
             theirs: Path) -> None:
    code = main(argv)
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2, (argv, err)
    assert len(err) == 1, (argv, err)
    assert str(theirs.resolve()) in err[0] and str(mine.resolve()) in err[0], (argv, err)


def _serve_refused(args: list[str], env: dict[str, str], cwd: Path, mine: Path,
                   theirs: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "fleet_pipelines.cli", "serve", "--no-launch",
                           "--port", "1", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1, done.stderr
    assert str(theirs.resolve()) in err[0] and str(mine.resolve()) in err[0]


@pytest.mark.parametrize("name", ["B", "C"])
def test_another_repositorys_state_directory_is_refused_by_every_command(
    name: str, repos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    a_home = repos["A"] / ".fleet"
    before = _digest(a_home)
    patch = tmp_path / "unit.patch"
    patch.write_text("")
    monkeypatch.setenv("FLEET_HOME", str(a_home))
    for argv in _commands(repos[name], patch):
        _refused(argv, capsys, repos[name], repos["A"])
    monkeypatch.delenv("FLEET_HOME")
    _refused(["sweep", str(repos[name]), "-c", "yaml-safe-load", "--home", str(a_home)],
             capsys, repos[name], repos["A"])
    import os

    _serve_refused(["--repo", str(repos[name])], {**os.environ, "FLEET_HOME": str(a_home)},
                   tmp_path, repos[name], repos["A"])
    assert _digest(a_home) == before  # nothing of A's state was read into B's or changed
    assert not (repos[name] / ".fleet").exists()


def test_a_sqlite_store_in_another_repositorys_state_directory_is_refused(
    repos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    a_db = repos["A"] / ".fleet" / "fleet.db"
    before = a_db.read_bytes()
    patch = tmp_path / "unit.patch"
    patch.write_text("")
    b = str(repos["B"])
    for argv in (
        ["fix", b, "-c", "yaml-safe-load", "-u", "u1", "--sandbox", "bwrap", "--store", str(a_db)],
        ["verify", b, str(patch), "--unit", "u1", "--sandbox", "bwrap", "--store", str(a_db)],
        ["rollback", "--repo", b, "--unit", "u1", "--to", "0", "--store", str(a_db)],
        ["task", "t", "app/config.py", "--repo", b, "--sandbox", "bwrap", "--store", str(a_db)],
        ["ledger", "verify", "--repo", b, "--store", str(a_db)],
    ):
        _refused(argv, capsys, repos["B"], repos["A"])
    monkeypatch.setenv("FLEET_STORE_URL", f"sqlite:///{a_db}")
    for argv in (["sweep", b, "-c", "yaml-safe-load", "--sandbox", "bwrap", "--in-process"],
                 ["plan", b, "-c", "yaml-safe-load"]):
        _refused(argv, capsys, repos["B"], repos["A"])
    monkeypatch.delenv("FLEET_STORE_URL")
    import os

    _serve_refused(["--repo", b, "--store", str(a_db)], dict(os.environ), tmp_path,
                   repos["B"], repos["A"])
    assert a_db.read_bytes() == before


def test_another_repositorys_graph_snapshot_is_refused(
    repos: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = tmp_path / "graph.snapshot"
    assert main(["index", str(repos["A"]), "-q", "-o", str(snapshot)]) == 0
    capsys.readouterr()
    before = snapshot.read_bytes()
    for name, argv in (
        ("C", ["index", str(repos["C"]), "-q", "-o", str(snapshot)]),  # not its base either
        ("C", ["graph", "show", "load_config", "--repo", str(repos["C"]), "-s", str(snapshot)]),
        ("B", ["graph", "edges", str(repos["B"]), "-s", str(snapshot)]),
    ):
        _refused(argv, capsys, repos[name], repos["A"])
    assert snapshot.read_bytes() == before  # never overwritten by another repository's graph
    assert main(["graph", "show", "load_config", "--repo", str(repos["A"]), "-s",
                 str(snapshot), "--json"]) == 0
    assert main(["index", str(repos["A"]), "-q", "-o", str(snapshot)]) == 0  # its own: re-used


def test_the_default_state_is_the_repositorys_own_from_any_directory(
    repos: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = repos["B"]
    work = Path.cwd()
    assert main(["plan", str(b), "-c", "yaml-safe-load"]) == 0  # a dry run: writes no state
    assert not (b / ".fleet").exists()
    assert main(["task", "t", "app/config.py", "--repo", str(b), "--sandbox", "bwrap"]) == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err  # refused for the key, not the state
    assert (b / ".fleet" / "repository.json").is_file()  # claimed: B's own
    with open_store(f"sqlite:///{b / '.fleet' / 'fleet.db'}") as raw:
        scoped_store(raw, repository_key(b)).ledger.append("unit.planned", {"key": "b1"},
                                                           unit="b1")
    assert main(["ledger", "verify", "--repo", str(b)]) == 0  # B's store, not ./.fleet's
    assert "ledger verifies: 1 events" in capsys.readouterr().out
    assert main(["rollback", "--repo", str(b), "--unit", "u1", "--to", "0"]) == 1
    assert "no restorable agent steps of unit u1" in capsys.readouterr().err  # A's u1: not B's
    assert not (work / ".fleet").exists()


def test_a_sweep_by_url_refuses_another_repositorys_state_before_cloning(
    repos: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a_home = repos["A"] / ".fleet"
    url = repos["B"].resolve().as_uri()
    code = main(["sweep", url, "-c", "yaml-safe-load", "--sandbox", "bwrap", "--in-process",
                 "--home", str(a_home)])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1, err
    assert str(repos["A"].resolve()) in err[0] and url in err[0]
    assert not (a_home / "mirrors").exists()  # B's mirror was never cloned into A's state
