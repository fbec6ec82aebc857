"""``fix.requirements`` with a command as the fixer: after the command has changed the code, the
CommandAgent moves the project's declared pin (the codemod agent's ``declarations_step``, in the
files the planner leased to the unit), so the unit's patch carries the pin move and the
impacted-tests gate runs the patched tree in a venv of the new range and the base in one held
below it; for a PEP 621 ``[project]`` table and for Poetry's ``[tool.poetry.dependencies]``
(moved to ``^2``, read as ``pydantic[email]>=2,<3``). Real git, the bubblewrap sandbox,
bump-pydantic 0.8.0 and pydantic from PyPI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fleet.agents.command import CommandAgent
from fleet.campaigns.spec import load_campaign, parse_campaign
from fleet.plan import plan_campaign
from fleet.types import Budget, Workspace
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, repo_untouched, run_unit
from tests.conftest import commit_files, git
from tests.unit.agents.test_command_campaigns import MODELS, TEST_MODELS

if TYPE_CHECKING:
    from fleet.store import Store
    from sandbox import Sandbox

pytestmark = pytest.mark.sandbox

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "plans"  # the project's own name
version = "0.1.0"
dependencies = [
    "pydantic>=1.8,<2",  # v1 models
]
"""
OLD_PIN = '    "pydantic>=1.8,<2",  # v1 models\n'
NEW_PIN = '    "pydantic>=2,<3",  # v1 models\n'
POETRY = """[tool.poetry]
name = "plans"
version = "0.1.0"
description = "Poetry's own table"
authors = ["A <a@example.org>"]

[tool.poetry.dependencies]
python = "^3.8"
pydantic = {version = "^1.10", extras = ["email"]}  # v1 models
"""
POETRY_OLD = 'pydantic = {version = "^1.10", extras = ["email"]}  # v1 models\n'
POETRY_NEW = 'pydantic = {version = "^2", extras = ["email"]}  # v1 models\n'


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return commit_files(git_repo, {"pyproject.toml": PYPROJECT, "models.py": MODELS,
                                   "test_models.py": TEST_MODELS, "conftest.py": ""},
                        "a pydantic v1 project")


@pytest.mark.parametrize(("pyproject", "old", "new", "before", "after"), [
    (PYPROJECT, OLD_PIN, NEW_PIN, "pydantic>=1.8,<2", "pydantic>=2,<3"),
    (POETRY, POETRY_OLD, POETRY_NEW, "pydantic[email]>=1.10,<2.0", "pydantic[email]>=2,<3"),
], ids=["pep621", "poetry"])
def test_bump_pydantic_moves_the_pin_and_the_gate_runs_the_patch_under_it(
    repo: Path, store: Store, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch, pyproject: str,
    old: str, new: str, before: str, after: str,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline reviewer
    monkeypatch.setenv("FLEET_TEST_PYTHONS", "target")
    monkeypatch.delenv("FLEET_TEST_PYTHON", raising=False)
    if pyproject != PYPROJECT:
        commit_files(repo, {"pyproject.toml": pyproject}, "a Poetry project")
    campaign = load_campaign("pydantic-v2-bump")
    assert campaign.fix.requirements == {"pydantic": ">=2,<3"}
    plan = plan_campaign(repo, campaign)
    [unit] = plan.units
    assert "pyproject.toml::<module>" in unit.write_set
    env = UnitEnv(leases=store.leases, ledger=store.ledger, agent=CommandAgent(campaign),
                  sandbox=bwrap, workspaces=GitWorkspaces(repo),
                  gates=VerifyGates(repo, plan.graph, campaign=campaign))
    result = run_unit(unit, env)
    assert result.status == "verified", result.detail
    assert git(repo, "show", f"{result.branch}:pyproject.toml") == pyproject.replace(
        old, new)  # one line moved, every other byte kept
    assert '@field_validator("cents")' in git(repo, "show", f"{result.branch}:models.py")
    tests = next(v for v in result.verdicts if v.gate == "impacted_tests")
    assert tests.status == "accept", tests
    assert f"from the base's declared requirements: {before}" in tests.evidence
    assert f"from the patch's declared requirements: {after}" in tests.evidence
    steps = store.ledger.events(unit=unit.key, kind="agent.step")
    assert [s.payload["action"] for s in steps] == ["command", "requirements"]
    assert steps[1].payload["result"] == "rewrote: pydantic>=2,<3 declared in pyproject.toml"
    assert f"+{new}" in steps[1].payload["diff"]
    assert repo_untouched(repo) and (repo / "pyproject.toml").read_text() == pyproject


def _command_campaign(script: str) -> str:
    return f"""name: pin-mover
description: a shell script as the fixer, with the pin moved after it
matchers: [{{rule: v1, import: [pydantic]}}]
fix:
  command: [sh, -c, '{script}', sh, "{{files}}"]
  requirements: {{pydantic: ">=2,<3"}}
plan: {{coupled: all}}
"""


def _workspace(repo: Path, tmp_path: Path) -> Workspace:
    head = git(repo, "rev-parse", "HEAD").strip()
    work = tmp_path / "work"
    git(repo, "worktree", "add", "-q", str(work), head)
    return Workspace(work, "main", head, tmp_path / "scratch", repo)


def test_the_declarations_are_not_handed_to_the_command(
    repo: Path, tmp_path: Path, bwrap: Sandbox
) -> None:
    campaign = parse_campaign(_command_campaign(
        'for f; do echo "# seen by the fixer" >> "$f"; done'), "pin-mover.yaml")
    [unit] = plan_campaign(repo, campaign).units
    assert unit.paths == ("models.py", "pyproject.toml")
    outcome = CommandAgent(campaign).run(unit, _workspace(repo, tmp_path), bwrap, Budget())
    assert outcome.ok, outcome.detail
    command, pin = outcome.steps
    assert command.arguments["files"] == ["models.py"]
    assert pin.action == "requirements" and pin.arguments["paths"] == ["pyproject.toml"]
    assert f"-{OLD_PIN}+{NEW_PIN}" in outcome.patch
    assert outcome.patch.count("+# seen by the fixer") == 1
    assert "# seen" not in outcome.patch.split("diff --git a/pyproject.toml", 1)[1]


def test_a_command_that_changed_nothing_moves_no_pin(
    repo: Path, tmp_path: Path, bwrap: Sandbox
) -> None:
    campaign = parse_campaign(_command_campaign("true"), "pin-mover.yaml")
    [unit] = plan_campaign(repo, campaign).units
    ws = _workspace(repo, tmp_path)
    outcome = CommandAgent(campaign).run(unit, ws, bwrap, Budget())
    assert outcome.stop_reason.value == "nothing_to_do" and outcome.patch == ""
    assert [s.action for s in outcome.steps] == ["command"]
    assert (ws.path / "pyproject.toml").read_text() == PYPROJECT

