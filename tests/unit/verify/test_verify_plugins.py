"""A target's tests on the fleet's own interpreter load only the pytest plugins the target
reaches through its requirements: the fleet's test tools (Faker, Hypothesis, xdist, timeout,
anyio) installed beside it are not the target's, and loading them cost ~2 CPU-s of every gate
run (the acme suite: 3.1-3.5 CPU-s with them, 0.9-1.0 without)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fleet.agents._tools import Toolbox
from fleet.integrate import pytest_runner
from fleet.types import Workspace, WorkUnit
from fleet.verify._plugins import blocked_plugins
from fleet.verify.execution import run_pytest
from sandbox import Sandbox

USES_FAKER = '''def test_name(faker):
    assert faker.name()
'''


def _target(root: Path, requirements: str) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "target"\nversion = "1"\ndependencies = [{requirements}]\n')
    (root / "test_it.py").write_text(USES_FAKER)
    return root


def test_plugins_the_target_does_not_reach_are_blocked(tmp_path: Path) -> None:
    args = blocked_plugins(sys.executable, _target(tmp_path / "t", '"pytest>=7"'))
    blocked = {args[i + 1] for i in range(0, len(args), 2)}
    assert set(args[::2]) == {"-p"}
    assert {"no:faker", "no:hypothesispytest", "no:xdist"} <= blocked


def test_a_declared_plugin_and_what_it_requires_stay(tmp_path: Path) -> None:
    # hypothesis is named; pytest-xdist is not, and hypothesis does not require it
    args = blocked_plugins(sys.executable,
                           _target(tmp_path / "t", '"hypothesis", "Faker>=1"'))
    assert "no:hypothesispytest" not in args and "no:faker" not in args
    assert "no:xdist" in args


def test_another_interpreter_is_the_targets_own_environment(tmp_path: Path) -> None:
    assert blocked_plugins("/usr/bin/python3", _target(tmp_path / "t", "")) == []


@pytest.mark.sandbox
def test_a_run_sees_a_plugin_fixture_only_when_the_target_declares_it(
    tmp_path: Path, bwrap: Sandbox
) -> None:
    test = "test_it.py::test_it::test_name"
    without = run_pytest(bwrap, _target(tmp_path / "a", '"pytest"'), [])
    declared = run_pytest(bwrap, _target(tmp_path / "b", '"pytest", "Faker"'), [])
    assert without.outcomes == {test: "error"}, without.output[-2000:]
    assert "fixture 'faker' not found" in without.output
    assert declared.outcomes == {test: "passed"}, declared.output[-2000:]


@pytest.mark.sandbox
def test_integrations_rerun_loads_a_plugin_only_when_the_target_declares_it(
    tmp_path: Path, bwrap: Sandbox
) -> None:
    test = "test_it.py::test_it::test_name"
    without = pytest_runner(bwrap)(_target(tmp_path / "a", '"pytest"'))
    declared = pytest_runner(bwrap)(_target(tmp_path / "b", '"pytest", "Faker"'))
    assert not without.passed and without.outcomes == {test: "error"}, without.output
    assert "fixture 'faker' not found" in without.output
    assert declared.passed and declared.outcomes == {test: "passed"}, declared.output


@pytest.mark.sandbox
def test_the_agents_run_tests_tool_loads_a_plugin_only_when_the_target_declares_it(
    tmp_path: Path, bwrap: Sandbox
) -> None:
    def run_tests(root: Path) -> tuple[bool, str]:
        unit = WorkUnit("u", "c", "HEAD", (), (), ())
        workspace = Workspace(root, "main", "HEAD", tmp_path / "scratch", root)
        return Toolbox(unit, workspace, bwrap).call("run_tests", {"paths": ["test_it.py"]})

    ok, text = run_tests(_target(tmp_path / "a", '"pytest"'))
    assert not ok and "fixture 'faker' not found" in text, text
    ok, text = run_tests(_target(tmp_path / "b", '"pytest", "Faker"'))
    assert ok and "1 passed" in text, text
