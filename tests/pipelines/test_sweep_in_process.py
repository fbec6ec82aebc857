"""``fleet sweep --in-process`` / ``FLEET_ENGINE=in-process``: the sweep's runs execute in the
command's own process (no daemon, no code server) and are on the instance like submitted ones,
without the code location's origin that re-execution from the UI needs; ``--submitted`` and
``--in-process`` win over ``FLEET_ENGINE``; an unknown ``FLEET_ENGINE`` is one line, exit 2,
before anything runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fleet.errors import ConfigError
from fleet_pipelines.cli import main
from fleet_pipelines.commands.pipeline import in_process
from tests.conftest import commit_files

pytestmark = [pytest.mark.sandbox]
FILES = {
    "app/__init__.py": "",
    "app/config.py": "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n",
    "tests/test_config.py": ("from app.config import load_config\n\n\n"
                             "def test_config():\n    assert load_config('a: 1') == {'a': 1}\n"),
}


def test_in_process_sweep(git_repo: Path, tmp_path: Path, bwrap: object,
                          capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster import DagsterInstance, DagsterRunStatus

    repo = commit_files(git_repo, FILES, "tiny")
    dagster_home = tmp_path / "dagster"
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    monkeypatch.setenv("FLEET_ENGINE", "in-process")
    assert main(["sweep", str(repo), "-c", "yaml-safe-load", "--sandbox", "bwrap",
                 "--home", str(tmp_path / "home")]) == 0
    out, err = capsys.readouterr()
    assert "verified, integrated" in out and "5 Dagster run(s)" in out
    assert "runs execute in this process (--in-process)" in " ".join(err.split())
    assert "Dagster daemon" not in err  # none started, none used
    assert not (dagster_home / "fleet-daemon.pid").exists()
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        runs = instance.get_runs()
        assert len(runs) == 5
        assert {r.status for r in runs} == {DagsterRunStatus.SUCCESS}
        assert {r.remote_job_origin for r in runs} == {None}  # not re-executable from the UI


def test_the_engine_setting(monkeypatch: pytest.MonkeyPatch, git_repo: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FLEET_ENGINE", raising=False)
    assert in_process(None) is False  # submitted by default
    monkeypatch.setenv("FLEET_ENGINE", "in-process")
    assert in_process(None) is True
    assert in_process(False) is False  # --submitted wins over the environment
    monkeypatch.setenv("FLEET_ENGINE", "submitted")
    assert in_process(True) is True
    monkeypatch.setenv("FLEET_ENGINE", "inprocess")
    with pytest.raises(ConfigError, match=re.escape(
            "FLEET_ENGINE='inprocess': expected one of submitted|in-process")):
        in_process(None)
    assert main(["sweep", str(git_repo), "-c", "yaml-safe-load", "--home",
                 str(git_repo.parent / "home")]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "error: FLEET_ENGINE='inprocess': expected one of submitted|in-process"]
    assert not (git_repo.parent / "home").exists()  # refused before anything was written
