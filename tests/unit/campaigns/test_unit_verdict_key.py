"""Issue 17, defect 7: re-running a sweep with another test interpreter reused the old verdicts
("nothing new"). A verdict now records what it was judged with (test interpreter(s), campaign
version, gate set, base commit); change any and the unit is pending again. ``--redo KEY|all``
(a 12-character prefix will do) forces it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fleet.campaigns.spec import load_campaign
from fleet.errors import ConfigError
from fleet.store import Store
from fleet.types import WorkUnit
from fleet.unit import (
    UnitResult,
    judged_with,
    latest_results,
    record_planned,
    record_result,
    redo,
    stamp_judged_with,
)
from fleet.verify.execution import interpreter_name

BUILTIN = Path(load_campaign("datetime-utcnow").source)


def _unit(key: str, campaign: str) -> WorkUnit:
    return WorkUnit(key, campaign, "a" * 40, ("m.py::f",), (), ())


def test_a_verdict_is_judged_again_when_what_judged_it_changes(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    campaign = tmp_path / "camp.yaml"
    campaign.write_text(BUILTIN.read_text())
    name = str(campaign)
    monkeypatch.setenv("FLEET_TEST_PYTHON", "/opt/py311/bin/python")
    monkeypatch.delenv("FLEET_TEST_PYTHONS", raising=False)
    verified = stamp_judged_with(UnitResult("u1" * 8, name, "verified", "a" * 40))
    record_result(store.ledger, verified, "t")
    [stored] = latest_results(store.ledger, name).values()
    assert stored.judged_with["pythons"] == "/opt/py311/bin/python"
    assert stored.judged_with["gates"] == list(load_campaign(name).gates)
    assert stored.judged_with["base_commit"] == "a" * 40

    monkeypatch.setenv("FLEET_TEST_PYTHON", "/opt/py310/bin/python")  # another interpreter
    assert latest_results(store.ledger, name) == {}
    monkeypatch.setenv("FLEET_TEST_PYTHON", "/opt/py311/bin/python")
    assert list(latest_results(store.ledger, name)) == ["u1" * 8]
    monkeypatch.setenv("FLEET_TEST_PYTHONS", "/opt/py311/bin/python:/opt/py36/bin/python")
    assert latest_results(store.ledger, name) == {}
    monkeypatch.delenv("FLEET_TEST_PYTHONS")

    campaign.write_text(BUILTIN.read_text().replace("gates: [", "gates: [security, "))
    assert latest_results(store.ledger, name) == {}  # another gate set (and version)
    campaign.write_text(BUILTIN.read_text().replace("make both sides aware", "keep both aware"))
    assert judged_with(name, "a" * 40)["key"] != stored.judged_with["key"]  # a new prompt
    assert latest_results(store.ledger, name) == {}
    campaign.write_text(BUILTIN.read_text())
    assert list(latest_results(store.ledger, name)) == ["u1" * 8]
    # an agent failure is not a verdict: it records nothing to key
    record_result(
        store.ledger, stamp_judged_with(UnitResult("u2" * 8, name, "agent_failed", "a" * 40)), "t"
    )
    assert not latest_results(store.ledger, name)["u2" * 8].judged_with


def test_redo_takes_a_key_a_prefix_or_all(store: Store) -> None:
    keys = ["3f9a2c41d07b55e0aa", "3f9a2c41d07bffff01", "77aa00112233445566"]
    record_planned(store.ledger, [_unit(k, "datetime-utcnow") for k in keys])
    for key in keys:
        record_result(store.ledger, UnitResult(key, "datetime-utcnow", "verified", "a" * 40), "t")
    assert redo(store.ledger, "datetime-utcnow", ["77aa00112233"]) == ["77aa00112233445566"]
    assert sorted(latest_results(store.ledger, "datetime-utcnow")) == keys[:2]
    with pytest.raises(ConfigError, match="--redo 3f9a2c41d07b: 2 units of campaign"):
        redo(store.ledger, "datetime-utcnow", ["3f9a2c41d07b"])
    with pytest.raises(ConfigError, match="--redo nope: no planned unit"):
        redo(store.ledger, "datetime-utcnow", ["nope"])
    assert redo(store.ledger, "datetime-utcnow", ["all"]) == sorted(keys)
    assert latest_results(store.ledger, "datetime-utcnow") == {}


def test_ledger_show_takes_the_12_character_key_every_table_prints(
    store: Store, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 17, defect 10: ``fleet ledger show --unit <12-char prefix>`` printed nothing and
    exited 0."""
    from fleet_pipelines.cli import main

    keys = ["3f9a2c41d07b55e0aa", "3f9a2c41d07bffff01"]
    record_planned(store.ledger, [_unit(k, "datetime-utcnow") for k in keys])
    assert main(["ledger", "show", "--unit", "3f9a2c41d07b55", "--store", store_url]) == 0
    out = capsys.readouterr().out
    assert "unit.planned" in out and keys[0] in out and keys[1] not in out
    assert main(["ledger", "show", "--unit", "3f9a2c41d07b", "--store", store_url]) == 1
    assert ("--unit 3f9a2c41d07b: 2 unit keys (3f9a2c41d07b55e0aa, 3f9a2c41d07bffff01) in the "
            "ledger start with it") in capsys.readouterr().err
    assert main(["ledger", "show", "--unit", "ffff", "--store", store_url]) == 1
    assert "--unit ffff: no unit key in the ledger start with it" in capsys.readouterr().err


def test_a_package_installed_into_the_test_interpreter_judges_the_unit_again(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key names what the test interpreter *is* (its installed distributions), not only its
    path: the same path with another install judges again. Another home (its venv cache) does
    not: the processes of one deployment each have their own and must see each other's verdicts."""
    import venv

    python = tmp_path / "env" / "bin" / "python"
    venv.EnvBuilder(with_pip=False).create(tmp_path / "env")
    monkeypatch.setenv("FLEET_TEST_PYTHON", str(python))
    monkeypatch.setenv("FLEET_TEST_PYTHONS", "target")
    monkeypatch.setenv("FLEET_HOME", str(tmp_path / "home-a"))
    verified = stamp_judged_with(UnitResult("u3" * 8, "datetime-utcnow", "verified", "a" * 40))
    assert verified.judged_with["environment"]["target"][0] == str(python.resolve())
    record_result(store.ledger, verified, "t")
    assert list(latest_results(store.ledger, "datetime-utcnow")) == ["u3" * 8]

    monkeypatch.setenv("FLEET_HOME", str(tmp_path / "home-b"))  # a worker's own home
    monkeypatch.setenv("FLEET_PYTHONS_CACHE", str(tmp_path / "venvs-b"))
    assert list(latest_results(store.ledger, "datetime-utcnow")) == ["u3" * 8]

    [site] = (tmp_path / "env").glob("lib/python3*/site-packages")
    info = site / "attrs-23.1.0.dist-info"  # what pip leaves behind
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: attrs\nVersion: 23.1.0\n")
    assert latest_results(store.ledger, "datetime-utcnow") == {}


def test_python_and_python3_of_one_venv_judge_alike(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run worker started as ``.venv/bin/python3`` (dagster's console scripts) records its
    verdict; the ``fleet`` that reads it runs as ``.venv/bin/python`` (its own script's shebang):
    one interpreter, so the verdict stands. Another venv's interpreter still re-judges."""
    real = Path(sys.executable).resolve()
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(real)
    (venv / "python3").symlink_to("python")
    (venv / f"python3.{sys.version_info.minor}").symlink_to("python")
    other = tmp_path / "other" / "bin"
    other.mkdir(parents=True)
    (other / "python3").write_text("#!/bin/sh\n")  # another file
    monkeypatch.delenv("FLEET_TEST_PYTHONS", raising=False)
    name = "datetime-utcnow"
    for started in ("python3", f"python3.{sys.version_info.minor}", "python"):
        assert interpreter_name(str(venv / started)) == str(venv / "python")
    assert interpreter_name(str(other / "python3")) == str(other / "python3")
    assert interpreter_name("/nonexistent/bin/python3") == "/nonexistent/bin/python3"

    monkeypatch.setenv("FLEET_TEST_PYTHON", str(venv / "python3"))
    record_result(store.ledger, stamp_judged_with(UnitResult("u2" * 8, name, "verified",
                                                             "a" * 40)), "t")
    monkeypatch.setenv("FLEET_TEST_PYTHON", str(venv / "python"))
    assert list(latest_results(store.ledger, name)) == ["u2" * 8]
    monkeypatch.setenv("FLEET_TEST_PYTHON", str(other / "python3"))
    assert latest_results(store.ledger, name) == {}
