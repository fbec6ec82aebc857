"""Issue 17, defect 9: codemod output must pass ``git diff --check`` (no trailing whitespace,
no blank lines at EOF) and keep the argument layout. Measured on real code: the
unittest-aliases codemod over a boto 2.49.0 subset (135 lines) and the datetime-utcnow codemod
over PyJWT 2.0.0, every unit through the codemod agent."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fleet.agents.codemod import CodemodAgent
from fleet.campaigns.spec import load_campaign
from fleet.plan import plan_campaign
from fleet.types import Budget, Workspace
from tests.conftest import git

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"


@pytest.mark.parametrize(("project", "campaign", "lines"), [
    ("boto-2.49.0-subset", "unittest-aliases", 135),
    ("pyjwt-2.0.0", "datetime-utcnow", 9),
])
def test_codemod_output_passes_git_diff_check(
    project: str, campaign: str, lines: int, tmp_path: Path
) -> None:
    repo = shutil.copytree(PROJECTS / project, tmp_path / project)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    spec = load_campaign(campaign)
    plan = plan_campaign(repo, spec)
    agent = CodemodAgent(spec, plan.graph)
    for unit in plan.units:
        outcome = agent.run(unit, Workspace(repo, "x", unit.base_commit, repo, repo), None,
                            Budget())
        assert outcome.ok, outcome.detail
    check = subprocess.run(["git", "diff", "HEAD", "--check"], cwd=repo, capture_output=True,
                           text=True)
    assert check.returncode == 0 and check.stdout == "", check.stdout
    stat = git(repo, "diff", "HEAD", "--numstat")
    added = sum(int(line.split()[0]) for line in stat.splitlines())
    removed = sum(int(line.split()[1]) for line in stat.splitlines())
    # one line for one line: no call re-flowed, no argument moved to another line
    assert (added, removed) == (lines, lines)
