"""Outside check (session 3): ``--store`` took only URLs although its help names the default as
the path ``.fleet/fleet.db``; ``fleet ledger verify --store .fleet/fleet.db`` failed, ``fleet
rollback --store /missing.db`` died in a ``ConfigError`` traceback, and ``fleet verify --unit K``
with a key the ledger does not have went on silently without a write set."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.store import open_store
from fleet_pipelines.cli import main


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / ".fleet" / "fleet.db"
    path.parent.mkdir()
    with open_store(f"sqlite:///{path}") as store:
        store.ledger.append("unit.planned", {"write_set": ["a.py::f"]}, unit="u1", campaign="c",
                            actor="test")
    return path


def test_a_store_path_is_a_sqlite_store(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("FLEET_STORE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["ledger", "verify", "--store", ".fleet/fleet.db"]) == 0
    assert "ledger verifies: 1 events" in capsys.readouterr().out
    assert main(["ledger", "show", "--store", str(db), "--json"]) == 0
    assert '"unit": "u1"' in capsys.readouterr().out


def test_rollback_refuses_a_missing_store_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.db"
    assert main(["rollback", "--patch", "x", "--campaign", "c", "--store", str(missing)]) == 2
    assert f"no fleet store at sqlite:///{missing}" in capsys.readouterr().err
    assert not missing.exists()


def test_verify_names_a_unit_the_ledger_does_not_have(
    db: Path, git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = tmp_path / "empty.diff"
    patch.write_text("")
    assert main(["verify", str(git_repo), str(patch), "--unit", "nope", "--store", str(db)]) == 2
    assert "--unit nope: no such unit in the ledger" in capsys.readouterr().err
    missing = tmp_path / "missing.db"
    assert main(["verify", str(git_repo), str(patch), "--unit", "u1",
                 "--store", str(missing)]) == 2
    assert "--unit u1: no fleet store at" in capsys.readouterr().err
    assert not missing.exists()
