"""CodemodAgent on a real git workspace: spans of the unit's symbols only, transcript, stop
reasons, derived parameters from the graph."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from fleet.agents.codemod import CodemodAgent, derived_params, unit_spans
from fleet.campaigns.spec import Campaign, PlanSettings, load_campaign, parse_campaign
from fleet.forge.worktree import workspace
from fleet.graph import index
from fleet.plan import Plan, plan_campaign
from fleet.protocols import Agent
from fleet.types import Budget, StopReason, WorkUnit

CODE = """\
import datetime


class Job:
    started = None

    def start(self):
        self.started = datetime.datetime.utcnow()  # keep this comment

    def stop(self):
        return datetime.datetime.utcnow()


def tick():
    return datetime.datetime.utcnow()
"""


def _per_symbol() -> Campaign:
    """datetime-utcnow split one symbol per unit (the built-in couples a file's sites)."""
    return dataclasses.replace(load_campaign("datetime-utcnow"), plan=PlanSettings("symbol"))


def _start_unit(plan: Plan) -> WorkUnit:
    """A unit owning ``Job.start`` and the module-level code (where the codemod adds ``from
    datetime import UTC``) but not ``Job.stop`` or ``tick``. The planner keeps a file's sites
    together for an import-editing codemod, so this narrower unit is cut from its unit here."""
    [unit] = plan.units
    assert "jobs.py::<module>" in unit.write_set
    write = ("jobs.py::<module>", "jobs.py::Job.start")
    return dataclasses.replace(unit, write_set=write, findings=tuple(
        f for f in unit.findings if f.symbol == "jobs.py::Job.start"))


def _commit(repo: Path) -> None:
    (repo / "jobs.py").write_text(CODE)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "jobs"],
                   cwd=repo, check=True)


def test_agent_rewrites_only_its_units_symbols(git_repo: Path) -> None:
    _commit(git_repo)
    campaign = _per_symbol()
    plan = plan_campaign(git_repo, campaign)
    unit = _start_unit(plan)
    agent = CodemodAgent(campaign, plan.graph)
    assert isinstance(agent, Agent)
    with workspace(git_repo, campaign.name, unit.key, unit.base_commit) as ws:
        outcome = agent.run(unit, ws, None, Budget())
        text = (ws.path / "jobs.py").read_text()
    assert outcome.ok and outcome.stop_reason is StopReason.FINISHED
    assert "self.started = datetime.datetime.now(UTC)  # keep this comment" in text
    assert text.count("datetime.datetime.utcnow()") == 2  # stop() and tick() are other units
    assert [s.action for s in outcome.steps] == ["codemod"]
    assert outcome.steps[0].arguments["path"] == "jobs.py"
    assert outcome.patch.count("\n+") == 3  # the import, its blank line and the call
    assert (git_repo / "jobs.py").read_text() == CODE


def test_spans_exclude_nested_symbols_the_unit_does_not_own(git_repo: Path) -> None:
    _commit(git_repo)
    graph = index(git_repo)
    plan = plan_campaign(git_repo, _per_symbol(), graph=graph)
    unit = _start_unit(plan)
    spans = unit_spans(graph, unit, "jobs.py")
    owned = b"".join(CODE.encode()[start:end] for start, end in spans)
    assert b"def start(self):" in owned and b"import datetime" in owned
    assert b"def stop(self):" not in owned and b"def tick():" not in owned
    assert unit_spans(None, unit, "jobs.py") == [(f.start_byte, f.end_byte) for f in unit.findings]


def test_nothing_to_do_and_no_codemod(git_repo: Path) -> None:
    _commit(git_repo)
    campaign = _per_symbol()
    plan = plan_campaign(git_repo, campaign)
    unit = plan.units[0]
    with workspace(git_repo, campaign.name, unit.key, unit.base_commit) as ws:
        (ws.path / "jobs.py").write_text(CODE.replace("utcnow()", "now()"))
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam",
                        "x"], cwd=ws.path, check=True)
        moved = type(ws)(ws.path, ws.branch, subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ws.path, capture_output=True, text=True,
            check=True).stdout.strip(), ws.scratch, ws.repo)
        outcome = CodemodAgent(campaign, plan.graph).run(unit, moved, None, Budget())
        assert outcome.stop_reason is StopReason.NOTHING_TO_DO and not outcome.ok
        prompt_only = parse_campaign(
            "name: p\ndescription: d\nmatchers: [{rule: r, call: x.y}]\nfix: {prompt: do it}\n")
        none = CodemodAgent(prompt_only).run(unit, ws, None, Budget())
        assert none.stop_reason is StopReason.NOTHING_TO_DO and "no codemod" in none.detail


def test_builtin_datetime_campaign_couples_a_files_sites(git_repo: Path) -> None:
    _commit(git_repo)
    plan = plan_campaign(git_repo, load_campaign("datetime-utcnow"))
    assert [u.write_set for u in plan.units] == [
        ("jobs.py::<module>", "jobs.py::Job.start", "jobs.py::Job.stop", "jobs.py::tick")]


def test_pydantic_models_are_derived_from_the_graph(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(
        "from pydantic import BaseModel\n\n\nclass Base(BaseModel):\n    x: int = 0\n\n\n"
        "class Child(Base):\n    y: int = 0\n\n\nclass Plain:\n    pass\n"
    )
    params = derived_params("pydantic-v2", {"v1_modules": []}, index(tmp_path))
    assert params["models"] == ["models.Base", "models.Child"]
    assert derived_params("yaml-safe-load", {}, index(tmp_path)) == {}
