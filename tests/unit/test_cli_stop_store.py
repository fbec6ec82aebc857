"""``fleet stop`` takes ``--store`` like every store command, and refuses (exit 2) to engage a
kill switch in a store that does not exist: a fresh store nobody reads would stop nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.store import open_store
from fleet_pipelines.cli import main


def test_stop_without_a_store_refuses_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FLEET_STORE_URL", raising=False)
    monkeypatch.delenv("FLEET_HOME", raising=False)
    assert main(["stop", "--reason", "incident 7"]) == 2
    err = capsys.readouterr().err
    assert "no fleet store at" in err and str(tmp_path / ".fleet" / "fleet.db") in err
    assert not (tmp_path / ".fleet" / "fleet.db").exists()
    assert main(["stop", "--off"]) == 2
    assert not (tmp_path / ".fleet" / "fleet.db").exists()


def test_stop_store_option_engages_and_releases_that_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FLEET_STORE_URL", raising=False)
    url = f"sqlite:///{tmp_path / 'elsewhere' / 'fleet.db'}"
    (tmp_path / "elsewhere").mkdir()
    open_store(url).close()
    assert main(["stop", "--store", url, "--reason", "incident 8"]) == 0
    assert f"kill switch engaged (incident 8) in {url}" in capsys.readouterr().out
    with open_store(url) as store:
        assert store.controls.kill_state().reason == "incident 8"
        assert [e.payload for e in store.ledger.events(kind="kill_switch.engaged")] == [
            {"reason": "incident 8"}]
    assert not (tmp_path / ".fleet").exists()
    assert main(["stop", "--store", url, "--off"]) == 0
    with open_store(url) as store:
        assert not store.controls.engaged()


def test_stop_reads_fleet_store_url_and_create_makes_a_new_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "env" / "fleet.db"
    db.parent.mkdir()
    monkeypatch.setenv("FLEET_STORE_URL", f"sqlite:///{db}")
    assert main(["stop"]) == 2
    assert not db.exists()
    assert main(["stop", "--create", "--reason", "before the first sweep"]) == 0
    with open_store(f"sqlite:///{db}") as store:
        assert store.controls.kill_state().reason == "before the first sweep"
    assert not (tmp_path / ".fleet").exists()
