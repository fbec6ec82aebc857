"""ClaudeAgent's tool loop driven by ScriptedModel over a real git worktree and a real sandbox."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fleet.agents.claude import ClaudeAgent, build_prompt
from fleet.agents.guard import BudgetGuard, DayBudget
from fleet.agents.scripted import ScriptedModel, ScriptExhausted, text_response, tool_call
from fleet.agents.scripted import tool_response as turn
from fleet.types import Budget, Finding, StopReason, Workspace, WorkUnit
from tests.conftest import git

if TYPE_CHECKING:
    from fleet.store import Store

CALC = '''"""Tiny calculator."""


def add(a, b):
    return a - b


def sub(a, b):
    return a - b
'''
TESTS = '''from calc import add, sub


def test_add():
    assert add(2, 3) == 5


def test_sub():
    assert sub(5, 3) == 2
'''
FIXED_ADD = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def workspace(git_repo: Path) -> Workspace:
    (git_repo / "calc.py").write_text(CALC)
    (git_repo / "tests").mkdir()
    (git_repo / "tests" / "test_calc.py").write_text(TESTS)
    (git_repo / "conftest.py").write_text("")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "calc")
    base = git(git_repo, "rev-parse", "HEAD").strip()
    scratch = git_repo.parent / "scratch"
    scratch.mkdir()
    return Workspace(git_repo, "main", base, scratch, git_repo)


@pytest.fixture
def unit(workspace: Workspace) -> WorkUnit:
    finding = Finding(
        "fp1", "fix-add", "wrong-op", "calc.py::add", "calc.py", 5, 4, 0, 0,
        "return a - b", "add subtracts",
    )
    return WorkUnit("unit1", "fix-add", workspace.base_commit, ("calc.py::add",),
                    ("calc.py::sub",), (finding,))


def _fixing_script() -> list[dict]:
    return [
        turn(tool_call("read_symbol", symbol="calc.py::add"), input_tokens=100, output_tokens=20),
        turn(tool_call("replace_symbol", symbol="calc.py::add", source=FIXED_ADD)),
        turn(tool_call("run_tests", paths=["tests/test_calc.py"])),
        turn(tool_call("finish", summary="add adds now")),
    ]


@pytest.mark.sandbox
def test_scripted_run_fixes_the_unit_and_returns_a_patch(
    unit: WorkUnit, workspace: Workspace, sandbox_backend: object
) -> None:
    model = ScriptedModel(_fixing_script())
    outcome = ClaudeAgent(model, notes=("prefer small diffs",)).run(
        unit, workspace, sandbox_backend, Budget()  # type: ignore[arg-type]
    )
    assert outcome.stop_reason is StopReason.FINISHED, outcome.detail
    assert outcome.ok and outcome.detail == "add adds now"
    assert "-    return a - b\n+    return a + b" in outcome.patch
    assert [s.action for s in outcome.steps] == [
        "read_symbol", "replace_symbol", "run_tests", "finish",
    ]
    assert outcome.steps[0].result == "def add(a, b):\n    return a - b\n"
    assert outcome.steps[2].ok and "2 passed" in outcome.steps[2].result
    assert outcome.cost.input_tokens == 130 and outcome.cost.output_tokens == 50
    assert outcome.cost.usd > 0
    # the prompt the model saw: campaign, findings, write set, memory notes
    first = model.requests[0]["messages"][0]["content"]
    assert "fix-add" in first and "add subtracts" in first and "calc.py::add" in first
    assert "prefer small diffs" in first
    # each tool_result went back to the model with the tool_use id it answers
    second = model.requests[1]["messages"]
    assert second[-1]["content"][0]["type"] == "tool_result"
    assert "return a - b" in second[-1]["content"][0]["content"]


def test_replace_outside_the_write_set_is_refused(unit: WorkUnit, workspace: Workspace,
                                                   sandbox_backend: object) -> None:
    script = [
        turn(tool_call("replace_symbol", symbol="calc.py::sub",
                       source="def sub(a, b):\n    return 0\n")),
        turn(tool_call("replace_symbol", symbol="calc.py::add", source="def add(a, b:\n  x\n")),
        turn(tool_call("replace_symbol", symbol="calc.py::add", source="def other():\n  pass\n")),
        turn(tool_call("finish", summary="gave up")),
    ]
    outcome = ClaudeAgent(ScriptedModel(script)).run(
        unit, workspace, sandbox_backend, Budget()  # type: ignore[arg-type]
    )
    refused = [s for s in outcome.steps if s.action == "replace_symbol"]
    assert [s.ok for s in refused] == [False, False, False]
    assert "outside this unit's write set" in refused[0].result
    assert "does not parse" in refused[1].result
    assert "defines 'other', not 'add'" in refused[2].result
    assert (workspace.path / "calc.py").read_text() == CALC
    assert outcome.patch == "" and not outcome.ok


@pytest.mark.parametrize(
    ("budget", "reason", "calls"),
    [
        (Budget(max_tool_calls=2), StopReason.BUDGET_TOOL_CALLS, 2),
        (Budget(max_tokens=45), StopReason.BUDGET_TOKENS, 3),
        (Budget(max_cost_usd=0.0), StopReason.BUDGET_COST, 0),
        (Budget(max_wall_s=0.0), StopReason.BUDGET_WALL, 0),
    ],
)
def test_budgets_stop_before_the_next_model_call(
    unit: WorkUnit, workspace: Workspace, sandbox_backend: object,
    budget: Budget, reason: StopReason, calls: int,
) -> None:
    step = turn(tool_call("search_symbols", query="calc"), input_tokens=10, output_tokens=5)
    model = ScriptedModel([step], repeat_last=True)
    outcome = ClaudeAgent(model).run(
        unit, workspace, sandbox_backend, budget  # type: ignore[arg-type]
    )
    assert outcome.stop_reason is reason
    assert len(model.requests) == calls
    assert outcome.detail


def test_kill_switch_stops_the_loop(unit: WorkUnit, workspace: Workspace,
                                    sandbox_backend: object) -> None:
    model = ScriptedModel([turn(tool_call("search_symbols", query="add"))], repeat_last=True)
    # engaged once the second model call has been made: its tool call is refused, and the
    # loop stops before a third call
    outcome = ClaudeAgent(model, kill_switch=lambda: len(model.requests) >= 2).run(
        unit, workspace, sandbox_backend, Budget()  # type: ignore[arg-type]
    )
    assert outcome.stop_reason is StopReason.KILLED
    assert len(model.requests) == 2 and len(outcome.steps) == 1
    assert outcome.steps[0].result.splitlines() == ["calc.py::add", "tests/test_calc.py::test_add"]
    seen = model.requests[1]["messages"]  # the first tool ran before the switch
    assert seen[-1]["content"][0]["is_error"] is False


def test_repeated_format_errors_stop_the_loop(unit: WorkUnit, workspace: Workspace,
                                              sandbox_backend: object) -> None:
    script = [
        text_response("I think I will fix it."),
        turn(tool_call("no_such_tool", x=1)),
        turn(tool_call("replace_symbol", symbol="calc.py::add")),  # no source
    ]
    model = ScriptedModel(script)
    outcome = ClaudeAgent(model, max_format_errors=3).run(
        unit, workspace, sandbox_backend, Budget()  # type: ignore[arg-type]
    )
    assert outcome.stop_reason is StopReason.FORMAT_ERRORS
    assert outcome.steps == ()
    last = model.requests[2]["messages"][-1]["content"][0]
    assert last["is_error"] and "unknown tool 'no_such_tool'" in last["content"]


def test_a_model_fault_is_an_error_outcome(unit: WorkUnit, workspace: Workspace,
                                           sandbox_backend: object) -> None:
    outcome = ClaudeAgent(ScriptedModel([])).run(
        unit, workspace, sandbox_backend, Budget()  # type: ignore[arg-type]
    )
    assert outcome.stop_reason is StopReason.ERROR
    assert "script has 0" in outcome.detail
    with pytest.raises(ScriptExhausted):
        ScriptedModel([]).complete("s", [], [], 10)


def test_day_budget_is_reserved_atomically_in_the_store(
    unit: WorkUnit, workspace: Workspace, sandbox_backend: object, store: Store
) -> None:
    step = turn(tool_call("search_symbols", query="x"), input_tokens=100, output_tokens=10)
    day = DayBudget(max_cost_usd=0.02)
    model = ScriptedModel([step], repeat_last=True)
    agent = ClaudeAgent(model, controls=store.controls, day_budget=day, max_tokens_per_turn=200)
    outcome = agent.run(unit, workspace, sandbox_backend, Budget())  # type: ignore[arg-type]
    assert outcome.stop_reason is StopReason.BUDGET_DAY, outcome.detail
    assert "cannot cover the next call" in outcome.detail
    calls = len(model.requests)
    assert calls >= 2
    scope = BudgetGuard(Budget(), campaign=unit.campaign).day_scope
    spent = store.controls.spent(scope)
    # reservations are trued up: the store holds exactly the usage the API reported
    assert spent.usd == pytest.approx(outcome.cost.usd) and spent.tokens == 110 * calls
    assert spent.usd <= day.max_cost_usd
    assert store.controls.spent("task:unit1").tokens == 110 * calls
    # a second agent of the same campaign shares the day: only what is left, never more
    again = ScriptedModel([step], repeat_last=True)
    second = ClaudeAgent(again, controls=store.controls, day_budget=day, max_tokens_per_turn=200)
    out2 = second.run(unit, workspace, sandbox_backend, Budget())  # type: ignore[arg-type]
    assert out2.stop_reason is StopReason.BUDGET_DAY
    assert len(again.requests) < calls
    assert store.controls.spent(scope).usd == pytest.approx(outcome.cost.usd + out2.cost.usd)
    assert store.controls.spent(scope).usd <= day.max_cost_usd


def test_the_store_kill_switch_stops_the_loop(
    unit: WorkUnit, workspace: Workspace, sandbox_backend: object, store: Store
) -> None:
    store.controls.engage("incident 42")
    model = ScriptedModel([turn(tool_call("finish", summary="x"))])
    outcome = ClaudeAgent(model, controls=store.controls).run(
        unit, workspace, sandbox_backend, Budget()  # type: ignore[arg-type]
    )
    assert outcome.stop_reason is StopReason.KILLED and model.requests == []


@pytest.mark.sandbox
def test_run_tool_never_sees_the_api_key(unit: WorkUnit, workspace: Workspace,
                                         sandbox_backend: object,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-123")
    script = [turn(tool_call("run", command="env; echo done")),
              turn(tool_call("finish", summary="looked"))]
    outcome = ClaudeAgent(ScriptedModel(script)).run(
        unit, workspace, sandbox_backend, Budget()  # type: ignore[arg-type]
    )
    assert "done" in outcome.steps[0].result
    assert "sk-ant-secret-123" not in outcome.steps[0].result
    assert "ANTHROPIC" not in outcome.steps[0].result
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-secret-123"


def test_build_prompt_without_findings(unit: WorkUnit) -> None:
    text = build_prompt(unit, "Retire add.", "calc.py::add\n  used by: x", ["n1"])
    assert text.index("# Campaign") < text.index("# Findings") < text.index("# Graph context")
    assert "- n1" in text


def test_tool_call_budget_holds_inside_one_turn(unit: WorkUnit, workspace: Workspace,
                                                sandbox_backend: object) -> None:
    three = turn(*(tool_call("search_symbols", query=q) for q in ("add", "sub", "calc")))
    model = ScriptedModel([three], repeat_last=True)
    outcome = ClaudeAgent(model).run(
        unit, workspace, sandbox_backend, Budget(max_tool_calls=2)  # type: ignore[arg-type]
    )
    assert outcome.stop_reason is StopReason.BUDGET_TOOL_CALLS
    assert len(model.requests) == 1 and len(outcome.steps) == 2


@pytest.mark.timeout(60)
def test_the_tools_read_through_the_one_source_reader(unit: WorkUnit, workspace: Workspace
                                                      ) -> None:
    # the model names the files: a link to /dev/zero, a FIFO or a huge file in the worktree
    # must be refused with fleet index's reason, never read by the host process
    from fleet.agents._tools import Toolbox
    from sandbox import LocalSandbox

    root = workspace.path
    os.symlink("/dev/zero", root / "zero.py")
    os.mkfifo(root / "pipe.py")
    (root / "huge.py").write_text("x = 1\n" * 200_000)
    box = Toolbox(unit, workspace, LocalSandbox())
    for name in ("zero.py", "pipe.py"):
        ok, text = box.tool_read_symbol(f"{name}::<module>")
        assert not ok and text == f"no such file in the worktree: {name}", text
    ok, text = box.tool_read_symbol("huge.py::<module>")
    assert not ok and text == "huge.py cannot be read: too large: 1200000 bytes > cap 1000000"
    ok, text = box.tool_search_symbols("add")
    assert ok and "calc.py::add" in text
