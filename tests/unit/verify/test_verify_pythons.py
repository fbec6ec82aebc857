"""Issue 17, "run the tests on every supported interpreter that is present": the pyenv Pythons
here (3.6-3.13) have no pytest, so the gate makes a venv per target interpreter with the
target's test requirements from PyPI (cached: ``fleet.verify.pythons.cache_dir``) and, by
default, runs the impacted tests on the target interpreter and on the oldest supported Python
present. On PyJWT 2.0.0 (``python_requires>=3.6``) the utcnow fix spelled ``from datetime import
UTC`` - issue 17's defect 3 - is rejected by the tests on Python 3.6 as well as by ``compat``. A
supported Python that is absent is said in one line, never passed over."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from fleet.verify import GateOptions, run_gates
from fleet.verify._requirements import test_requirements as requirements_of
from fleet.verify.pythons import cache_dir, plan
from fleet.verify.target import interpreters, supported_pythons
from sandbox import Sandbox
from tests.conftest import git

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
PYJWT = PROJECTS / "pyjwt-2.0.0"
CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "patches" / "pyjwt"


def test_the_test_requirements_come_from_the_targets_own_metadata() -> None:
    # setup.cfg [options.extras_require] tests
    assert requirements_of(PYJWT) == ("pytest>=6.0.0,<7.0.0", "coverage[toml]==5.0.4")
    # setup.py: install_requires through a name extended in a branch, and tests_require
    assert requirements_of(PROJECTS / "freezegun-0.3.15") == (
        "six", "python-dateutil>=1.0, != 2.0", "python-dateutil>=2.0",
        'mock;python_version<"3.4"', "nose")
    assert requirements_of(PROJECTS / "boto-2.49.0-subset") == ()
    # jsf 0.7.1's pants-generated setup.py: setup(**{"install_requires": (...), ...})
    assert requirements_of(PROJECTS / "jsf-0.7.1-subset") == (
        "faker>=15.3.4", "jsonschema>=4.17.3", "pydantic>=1.10.4", "rstr>=3.2.0",
        "smart-open[http]>=6.3.0")


def test_an_absent_interpreter_is_said_in_one_line(tmp_path: Path) -> None:
    got = plan(PYJWT, sys.executable, "", roots=(tmp_path / "no-pythons-here",))
    assert got.pythons == (sys.executable,)
    assert got.note == (
        "pythons (the target supports Python 3.6+ (setup.cfg python_requires>=3.6)): supported "
        "but not on this machine: 3.6, 3.7, 3.8, 3.9, 3.10, 3.12, 3.13, 3.14")
    assert "\n" not in got.note
    assert plan(PYJWT, sys.executable, "target").pythons == (sys.executable,)
    assert plan(PYJWT, sys.executable, f"/a/python{':'}/b/python").pythons == ("/a/python",
                                                                              "/b/python")


@pytest.fixture
def pyjwt(git_repo: Path) -> Path:
    for item in PYJWT.iterdir():
        (shutil.copytree if item.is_dir() else shutil.copy)(item, git_repo / item.name)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "PyJWT 2.0.0 sdist")
    return git_repo


@pytest.mark.sandbox
def test_the_oldest_supported_python_runs_the_tests_by_default(
    pyjwt: Path, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLEET_TEST_PYTHONS", raising=False)
    monkeypatch.delenv("FLEET_TEST_PYTHON", raising=False)
    present = interpreters(supported_pythons(pyjwt))
    patch = (CORPUS / "bad" / "001-utcnow-utc-3-11.patch").read_text()
    write = ["jwt/api_jwt.py::PyJWT._validate_claims", "jwt/api_jwt.py::<module>"]
    options = GateOptions(fail_fast=False, skip=frozenset({"review", "typecheck", "compat"}))
    [got] = [v for v in run_gates(pyjwt, patch, write, sandbox=bwrap, options=options)
             if v.gate == "impacted_tests"]
    if (3, 6) not in present:  # no pyenv here: the gate says so, and judges on the target
        assert "supported but not on this machine: 3.6" in got.evidence, got.evidence
        return
    venv = next(p for p in got.details["pythons"] if p != sys.executable)
    assert Path(venv).is_relative_to(cache_dir()) and "py3.6-" in venv
    assert got.details["pythons"] == [sys.executable, venv]
    assert got.status == "reject", got
    assert f"[{venv}] " in got.evidence
    assert "cannot import name 'UTC'" in got.evidence, got.evidence
    assert f"[{sys.executable}]" not in got.evidence  # 3.11 has datetime.UTC: it passes there
    assert "not run on 3.7, 3.8, 3.9, 3.10, 3.12, 3.13 (FLEET_TEST_PYTHONS=all runs them)" in (
        got.evidence)


@pytest.mark.sandbox
def test_an_added_python_that_cannot_judge_leaves_the_verdict_and_says_why(
    git_repo: Path, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found running ruff-up on schedule 0.6.0, whose tests import ``mock`` without declaring
    it: the venv of the oldest Python lacks it, so that interpreter cannot judge; the target
    interpreter's verdict stands, and the line names the missing module."""
    monkeypatch.delenv("FLEET_TEST_PYTHONS", raising=False)
    monkeypatch.delenv("FLEET_TEST_PYTHON", raising=False)
    (git_repo / "setup.py").write_text(
        "from setuptools import setup\n\nsetup(name='lib', python_requires='>=3.6')\n")
    (git_repo / "lib.py").write_text("def double(x):\n    return x * 2\n")
    (git_repo / "test_lib.py").write_text(  # pyyaml: in the fleet's venv, undeclared here
        "import yaml\n\nfrom lib import double\n\n\ndef test_double():\n"
        "    assert double(yaml.safe_load('2')) == 4\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "lib")
    (git_repo / "lib.py").write_text("def double(x):\n    return x + x\n")
    patch = git(git_repo, "diff")
    git(git_repo, "checkout", "-q", "--", ".")
    [got] = [v for v in run_gates(git_repo, patch, ["lib.py::double"], sandbox=bwrap,
                                  options=GateOptions(fail_fast=False,
                                                      skip=frozenset({"review"})))
             if v.gate == "impacted_tests"]
    assert got.status == "accept", got
    assert got.evidence.startswith("1 test file(s) by imports and names: 1 passed before, "
                                   "1 passed after"), got.evidence
    if (3, 6) not in interpreters(supported_pythons(git_repo)):
        assert "supported but not on this machine: 3.6" in got.evidence, got.evidence
        return
    assert "py3.6-" in got.evidence and " could not judge: " in got.evidence
    assert "ModuleNotFoundError: No module named 'yaml'" in got.evidence, got.evidence
