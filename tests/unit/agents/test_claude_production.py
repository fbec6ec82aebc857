"""The Claude agent wired from the campaign file (tools offered, fix.prompt in the brief, day
budget), its stop reasons, its context budget over a 60-step run, prompt caching through the real
SDK against the local fake Messages API, and the Claude reviewer as the review gate."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fleet.agents._context import estimate_tokens
from fleet.agents.anthropic_model import AnthropicModel, resolve_model, usage_cost
from fleet.agents.claude import CONTINUE, SYSTEM, ClaudeAgent
from fleet.agents.fake_messages import FakeMessagesServer
from fleet.agents.scripted import ScriptedModel, text_response, tool_call, tool_response
from fleet.agents.select import agent_for
from fleet.campaigns.spec import parse_campaign
from fleet.types import Budget, StopReason, Workspace, WorkUnit
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, default_reviewer, run_unit
from tests.conftest import commit_files, git

if TYPE_CHECKING:
    from fleet.store import Store
    from sandbox import Sandbox

CAMPAIGN = """name: tidy
description: Tidy the module.
matchers:
  - rule: r
    call: m.f
fix:
  prompt: Keep every public name; prefer the smallest diff.
tools: [read_symbol, replace_symbol]
gates: [applies, parses, lease_scope, review]
budgets: {daily_usd: 50}
"""
SRC = "def f():\n    return 1\n\n\ndef g():\n    return f()\n"


@pytest.fixture
def ws(git_repo: Path) -> Workspace:
    commit_files(git_repo, {"m.py": SRC}, "m")
    base = git(git_repo, "rev-parse", "HEAD").strip()
    return Workspace(git_repo, "main", base, git_repo.parent, git_repo)


@pytest.fixture
def unit(ws: Workspace) -> WorkUnit:
    return WorkUnit("u1", "tidy", ws.base_commit, ("m.py::f",), ("m.py::g",), ())


def _agent(store: Store | None, script: list[dict[str, Any]], **campaign: Any) -> ClaudeAgent:
    spec = dataclasses.replace(parse_campaign(CAMPAIGN, "tidy.yaml"), **campaign)
    agent = agent_for("claude", spec, model=ScriptedModel(script),
                      controls=store.controls if store else None)
    assert isinstance(agent, ClaudeAgent)
    return agent


def test_the_campaign_tools_prompt_and_day_budget_reach_the_agent(
    unit: WorkUnit, ws: Workspace, store: Store, bwrap: Sandbox
) -> None:
    script = [tool_response(tool_call("run", command="echo hi")),
              tool_response(tool_call("finish", summary="done"))]
    agent = _agent(store, script)
    outcome = agent.run(unit, ws, bwrap, Budget())
    model = agent.model
    assert isinstance(model, ScriptedModel)
    # only the campaign's tools (and finish) are offered; `run` is refused as not offered
    assert model.requests[0]["tools"] == ["read_symbol", "replace_symbol", "finish"]
    refused = model.requests[1]["messages"][-1]["content"][0]
    assert refused["is_error"] and "unknown tool 'run'" in refused["content"]
    assert [s.action for s in outcome.steps] == ["finish"]
    first = model.requests[0]["messages"][0]["content"]
    assert "Tidy the module." in first and "prefer the smallest diff" in first
    assert agent.day_budget.max_cost_usd == 50.0


def test_the_day_budget_of_the_campaign_stops_the_agent(
    unit: WorkUnit, ws: Workspace, store: Store, bwrap: Sandbox
) -> None:
    agent = _agent(store, [tool_response(tool_call("finish", summary="x"))],
                   daily_budget_usd=0.0001)
    outcome = agent.run(unit, ws, bwrap, Budget())
    assert outcome.stop_reason is StopReason.BUDGET_DAY
    assert "day budget of campaign 'tidy'" in outcome.detail


def test_max_tokens_continues_and_a_refusal_stops_with_its_reason(
    unit: WorkUnit, ws: Workspace, bwrap: Sandbox
) -> None:
    cut = {**text_response("I will now replace f with"), "stop_reason": "max_tokens"}
    refusal = {**text_response("I can't help with that change."), "stop_reason": "refusal"}
    model = ScriptedModel([cut, refusal])
    outcome = ClaudeAgent(model).run(unit, ws, bwrap, Budget())
    assert model.requests[1]["messages"][-1] == {"role": "user", "content": CONTINUE}
    assert outcome.stop_reason is StopReason.REFUSED
    assert outcome.detail == "I can't help with that change."


def test_a_60_step_run_stays_under_its_context_budget(
    git_repo: Path, bwrap: Sandbox
) -> None:
    big = "".join(f"def f{i}():\n    return {i} * 10 + 1  # padding padding padding\n\n\n"
                  for i in range(120))  # ~7,000 characters a read
    commit_files(git_repo, {"big.py": big}, "big")
    base = git(git_repo, "rev-parse", "HEAD").strip()
    ws = Workspace(git_repo, "main", base, git_repo.parent, git_repo)
    unit = WorkUnit("u60", "c", base, ("big.py::f0",), (), ())
    script = [tool_response(tool_call("read_symbol", symbol="big.py::<module>"))
              for _ in range(60)] + [tool_response(tool_call("finish", summary="read it all"))]
    model = ScriptedModel(script)
    agent = ClaudeAgent(model, context_tokens=12_000, keep_recent=4)
    outcome = agent.run(unit, ws, bwrap, Budget())
    assert outcome.stop_reason is StopReason.FINISHED and len(outcome.steps) == 61
    sizes = [estimate_tokens(SYSTEM, r["messages"], agent.tool_specs) for r in model.requests]
    assert len(sizes) == 61 and max(sizes) <= 12_000
    untrimmed = 60 * len(big) // 4
    assert untrimmed > 8 * 12_000  # without trimming the last request would be ~9x the budget
    last = model.requests[-1]["messages"]
    assert last[0]["content"].startswith("# Campaign: c")  # the brief is never trimmed
    assert last[-1]["content"][0]["content"] == big  # the newest result is whole
    assert "[trimmed" in last[2]["content"][0]["content"]


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    yield


def test_prompt_caching_marks_the_stable_prefix_and_the_cost_counts_the_savings(
    api_key: None, unit: WorkUnit, ws: Workspace, bwrap: Sandbox
) -> None:
    usage = [{"input_tokens": 40, "cache_creation_input_tokens": 3000, "output_tokens": 20},
             {"input_tokens": 60, "cache_read_input_tokens": 3000, "output_tokens": 20}]
    script = [{**tool_response(tool_call("read_symbol", symbol="m.py::f")), "usage": usage[0]},
              {**tool_response(tool_call("finish", summary="ok")), "usage": usage[1]}]
    with FakeMessagesServer(script) as server, AnthropicModel(
            model="claude-sonnet-4-6", base_url=server.base_url) as model:
        brief = "Campaign rules. " * 800  # a prefix long enough for the API to cache
        outcome = ClaudeAgent(model, campaign_brief=brief).run(unit, ws, bwrap, Budget())
    assert outcome.stop_reason is StopReason.FINISHED
    for request in server.requests:
        body = request["body"]
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" not in str(body["messages"][1:])
    uncached = sum(usage_cost("claude-sonnet-4-6", {
        "input_tokens": u["input_tokens"] + u.get("cache_creation_input_tokens", 0)
        + u.get("cache_read_input_tokens", 0), "output_tokens": 20}).usd for u in usage)
    assert outcome.cost.input_tokens == 6100
    # 3,000 read at a tenth (saves 0.9 x $3/M) less 3,000 written at 1.25x (costs 0.25 x)
    assert outcome.cost.cache_saved_usd == pytest.approx(3000 * 3 * (0.9 - 0.25) / 1e6)
    assert outcome.cost.usd == pytest.approx(uncached - outcome.cost.cache_saved_usd)


def test_the_model_comes_from_cli_then_campaign_then_env() -> None:
    env = {"FLEET_MODEL": "claude-haiku-4-5"}
    assert resolve_model("claude-opus-4-5", "claude-sonnet-4-6", env) == "claude-opus-4-5"
    assert resolve_model(None, "claude-sonnet-4-6", env) == "claude-sonnet-4-6"
    assert resolve_model(None, None, env) == "claude-haiku-4-5"
    assert resolve_model(None, None, {}).startswith("claude-sonnet-")


def test_the_claude_reviewer_is_the_review_gate_when_a_key_is_configured(
    api_key: None, ws: Workspace, unit: WorkUnit, store: Store, bwrap: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = ws.path
    spec = parse_campaign(CAMPAIGN, "tidy.yaml")
    edit = [tool_response(tool_call("replace_symbol", symbol="m.py::f",
                                    source="def f():\n    return 1  # tidy\n")),
            tool_response(tool_call("finish", summary="tidied"))]
    accept = '{"verdict": "accept", "reason": "m.py:2 only adds a comment"}'
    with FakeMessagesServer([text_response(accept)] * 3) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        gates = VerifyGates(repo, campaign=spec)
        env = UnitEnv(leases=store.leases, ledger=store.ledger,
                      agent=_agent(None, edit), sandbox=bwrap,
                      workspaces=GitWorkspaces(repo), gates=gates)
        result = run_unit(unit, env)
        reviewer = gates.reviewer
        assert reviewer is not None and reviewer.name == "claude"
        reviewer.model.close()  # type: ignore[attr-defined]
    assert result.status == "verified", result.detail
    assert [v.gate for v in result.verdicts] == ["applies", "parses", "lease_scope", "review"]
    assert result.verdicts[-1].details["reviewer"] == "claude"
    assert len(server.requests) == 3  # one call per lens
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert default_reviewer(spec).name == "offline"


LOAD = '''def load_catalog(path: str | Path) -> PlanCatalog:
    """Read ``plans: [...]`` from a YAML file."""
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    return PlanCatalog([PlanModel.parse_obj(entry) for entry in data.get("plans", [])])
'''
PARSE = '''def parse_catalog(text: str) -> PlanCatalog:
    """Parse a catalog given inline (used by the admin API's dry-run)."""
    data = yaml.safe_load(text) or {}
    return PlanCatalog([PlanModel.parse_obj(entry) for entry in data.get("plans", [])])
'''


@pytest.mark.sandbox
def test_fleet_fix_agent_claude_runs_the_unit_through_the_unit_stage(
    api_key: None, acme_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fleet.campaigns.spec import load_campaign
    from fleet.plan import plan_campaign
    from fleet.store import open_store
    from fleet_pipelines.cli import main

    plan = plan_campaign(acme_repo, load_campaign("yaml-safe-load"))
    unit = next(u for u in plan.units if u.paths == ("tenants/plans.py",))
    script = [tool_response(tool_call("read_symbol", symbol="tenants/plans.py::load_catalog")),
              tool_response(tool_call("replace_symbol", symbol="tenants/plans.py::load_catalog",
                                      source=LOAD),
                            tool_call("replace_symbol", symbol="tenants/plans.py::parse_catalog",
                                      source=PARSE)),
              tool_response(tool_call("finish", summary="safe_load in both readers"))]
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    with FakeMessagesServer(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        code = main(["fix", str(acme_repo), "-c", "yaml-safe-load", "-u", unit.key,
                     "--agent", "claude", "--model", "claude-sonnet-4-6", "--sandbox", "bwrap",
                     "--store", url, "--require-verified"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert server.requests[0]["body"]["model"] == "claude-sonnet-4-6"
    added = [line for line in captured.out.splitlines() if line.startswith("+ ")]
    assert len(added) == 2 and all("yaml.safe_load(" in line for line in added)
    assert "# verified (finished)" in captured.err
    assert git(acme_repo, "status", "--porcelain") == ""
    assert git(acme_repo, "branch", "--list", "fleet/*") == ""
    with open_store(url) as store:
        kinds = [e.kind for e in store.ledger.events(unit=unit.key)]
        assert kinds[0] == "lease.granted" and kinds[-1] == "unit.finished"
        assert kinds.count("agent.step") == 4 and "gate.verdict" in kinds
