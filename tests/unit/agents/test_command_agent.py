"""CommandAgent: a real command-line fixer (ruff from PyPI, in a tool environment) as the agent,
through the unit runner (leases, bwrap sandbox, gates, ledger), on a real git repository."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fleet.agents.command import CommandAgent
from fleet.campaigns.spec import load_campaign, parse_campaign
from fleet.plan import plan_campaign
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, repo_untouched, run_unit
from tests.conftest import commit_files, git

if TYPE_CHECKING:
    from fleet.store import Store
    from sandbox import Sandbox

pytestmark = pytest.mark.sandbox

OLD = '''import unittest


class Point(object):
    def __init__(self, x):
        self.x = x


def label(p):
    return "point %s" % (p.x,)


class PointTest(unittest.TestCase):
    def test_x(self):
        self.assertEquals(Point(2).x, 2)
'''
OTHER = "def untouched(x):\n    return x\n"
TESTS = """from geo import Point, PointTest, label


def test_label():
    assert label(Point(2)) == "point 2"


def test_point_case():
    PointTest("test_x").test_x()
"""


@pytest.fixture
def repo(git_repo: Path) -> Path:
    files = {"geo.py": OLD, "other.py": OTHER, "tests/test_geo.py": TESTS, "conftest.py": ""}
    return commit_files(git_repo, files, "old-style code")


def _env(repo: Path, store: Store, sandbox: Sandbox, agent: CommandAgent) -> UnitEnv:
    gates = VerifyGates(repo, options=None)
    return UnitEnv(leases=store.leases, ledger=store.ledger, agent=agent, sandbox=sandbox,
                   workspaces=GitWorkspaces(repo), gates=gates)


def test_ruff_findings_come_from_its_json_diagnostics_on_symbols(repo: Path) -> None:
    plan = plan_campaign(repo, load_campaign("ruff-up"))
    found = {(f.rule, f.symbol, f.line) for u in plan.units for f in u.findings}
    # UP031 (printf formatting) has only an unsafe fix: ruff --fix would not apply it, no finding
    assert found == {("UP004", "geo.py::Point", 4), ("UP005", "geo.py::PointTest.test_x", 15)}
    assert [u.paths for u in plan.units] == [("geo.py",)]  # one unit: ruff rewrites whole files


def test_ruff_fixes_the_unit_in_the_sandbox_and_the_gates_verify_it(
    repo: Path, store: Store, bwrap: Sandbox
) -> None:
    campaign = load_campaign("ruff-up")
    [unit] = plan_campaign(repo, campaign).units
    result = run_unit(unit, _env(repo, store, bwrap, CommandAgent(campaign)))
    assert result.status == "verified", result.detail
    fixed = git(repo, "show", f"{result.branch}:geo.py")
    assert "class Point:" in fixed and "self.assertEqual(" in fixed
    assert '"point %s" % (p.x,)' in fixed  # unsafe fix: not applied
    assert repo_untouched(repo) and (repo / "geo.py").read_text() == OLD
    kinds = [e.kind for e in store.ledger.events(unit=unit.key)]
    assert "agent.step" in kinds and "gate.verdict" in kinds and kinds[-1] == "unit.finished"
    [step] = store.ledger.events(unit=unit.key, kind="agent.step")
    assert "assertEqual" in step.payload["diff"]  # a replayable step


def _bad(command: list[str], **fix: object) -> str:
    lines = "\n".join(f"  {k}: {v}" for k, v in fix.items())
    argv = ", ".join(f"'{a}'" for a in command)
    return f"""name: bad-fixer
description: a fixer that misbehaves
matchers:
  - rule: up
    diagnostics: [ruff, check, --no-cache, --exit-zero, --select, UP005, --output-format, json,
                  "{{files}}"]
tool: {{pip: [ruff==0.17.6]}}
fix:
  command: [{argv}]
{lines}
plan: {{coupled: file}}
"""


@pytest.mark.parametrize(("command", "fix", "status", "expect"), [
    (["no-such-fixer", "{files}"], {}, "agent_failed", "no-such-fixer"),
    (["sh", "-c", "echo first; echo the fixer broke >&2; exit 3", "sh", "{files}"], {},
     "agent_failed", "exited 3:\nfirst\nthe fixer broke"),
    (["sh", "-c", "echo started; sleep 30"], {"timeout_s": 1}, "agent_failed",
     "timed out after 1s"),
    (["sh", "-c", 'for f; do sed -i s/assertEquals/assertEqual/ "$f"; done; '
      'echo "x = 1" >> other.py', "sh", "{files}"], {}, "rejected", "lease_scope"),
])
def test_a_misbehaving_fixer_fails_the_unit_with_its_own_last_lines(
    repo: Path, store: Store, bwrap: Sandbox, command: list[str], fix: dict[str, object],
    status: str, expect: str,
) -> None:
    campaign = parse_campaign(_bad(command, **fix), "bad.yaml")
    [unit] = plan_campaign(repo, campaign).units
    result = run_unit(unit, _env(repo, store, bwrap, CommandAgent(campaign)))
    assert result.status == status
    assert expect in result.detail
    assert repo_untouched(repo)
    assert (repo / "geo.py").read_text() == OLD and (repo / "other.py").read_text() == OTHER
    assert git(repo, "branch", "--list", "fleet/*").strip() == ""


def test_a_fixer_that_changes_nothing_is_nothing_to_do(
    repo: Path, store: Store, bwrap: Sandbox
) -> None:
    campaign = dataclasses.replace(load_campaign("ruff-up"))
    [unit] = plan_campaign(repo, campaign).units
    agent = CommandAgent(dataclasses.replace(campaign, fix=dataclasses.replace(
        campaign.fix, command=("true",))))
    result = run_unit(unit, _env(repo, store, bwrap, agent))
    assert result.status == "agent_failed" and result.stop_reason == "nothing_to_do"
