"""``ClaudeAgent``: a Messages API tool-use loop (mini-swe-agent style: run -> step -> query ->
execute) whose tools edit the unit's worktree symbol by symbol and run commands in its sandbox.

The loop stops on ``finish``, on a budget or the kill switch (checked before every model call),
or after ``max_format_errors`` consecutive malformed turns; each is an ``AgentOutcome`` stop
reason. The model is any ``fleet.protocols.Model``: ``AnthropicModel`` in production,
``ScriptedModel`` or ``AnthropicModel`` against the local fake Messages API in tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.agents._tools import TOOL_SPECS, Toolbox, missing_arguments
from fleet.agents.anthropic_model import AnthropicModel, usage_cost
from fleet.agents.guard import BudgetGuard, Controls, DayBudget
from fleet.errors import FleetError
from fleet.forge.worktree import workspace_diff
from fleet.protocols import Model
from fleet.types import AgentOutcome, AgentStep, Budget, Cost, StopReason, Workspace, WorkUnit
from sandbox import Sandbox

__all__ = ["AnthropicModel", "ClaudeAgent", "build_prompt"]

SYSTEM = """You are one agent of a fleet fixing one work unit of a code campaign.
Work only through the tools. You may change only the symbols in your write set; every other
symbol is leased to someone else and an edit there is refused. Keep behaviour unchanged except
where the campaign asks; run the tests that reach your symbols before you finish. Independent
gates (tests, lease scope, security lens, an adversarial reviewer) judge your patch afterwards.
Call `finish` with a summary when done."""


def build_prompt(
    unit: WorkUnit, campaign_brief: str, graph_context: str, notes: Sequence[str]
) -> str:
    """The first user message: campaign, the unit's findings, graph context, memory notes."""
    findings = "\n".join(
        f"- {f.path}:{f.line} in {f.symbol} [{f.rule}] {f.message}\n    {f.snippet.strip()}"
        for f in unit.findings
    )
    parts = [
        f"# Campaign: {unit.campaign}\n{campaign_brief}".rstrip(),
        "# Your write set (you may edit only these)\n" + "\n".join(unit.write_set),
        "# Read set (context; do not edit)\n" + ("\n".join(unit.read_set) or "(none)"),
        "# Findings\n" + (findings or "(none)"),
    ]
    if graph_context:
        parts.append("# Graph context\n" + graph_context)
    if notes:
        parts.append("# Project memory notes\n" + "\n".join(f"- {n}" for n in notes))
    return "\n\n".join(parts)


def graph_context(graph: Any, unit: WorkUnit, limit: int = 30) -> str:
    """Callers and dependencies of the write set from the symbol graph (empty without one)."""
    if graph is None:
        return ""
    lines = []
    for sid in unit.write_set:
        try:
            deps = sorted(graph.dependencies(sid))[:limit]
            users = sorted(graph.dependents([sid]))[:limit]
        except (KeyError, AttributeError):
            continue
        uses, used_by = ", ".join(deps) or "-", ", ".join(users) or "-"
        lines.append(f"{sid}\n  uses: {uses}\n  used by: {used_by}")
    return "\n".join(lines)


@dataclass
class ClaudeAgent:
    """Implements ``fleet.protocols.Agent``. Never raises for an agent-level failure."""

    model: Model
    campaign_brief: str = ""
    notes: Sequence[str] = ()
    graph: Any = None
    controls: Controls | None = None
    kill_switch: Callable[[], bool] | None = None
    day_budget: DayBudget = field(default_factory=DayBudget)
    max_format_errors: int = 3
    max_tokens_per_turn: int = 4096
    command_timeout_s: float = 300.0
    on_step: Callable[[AgentStep, str], None] | None = None
    name: str = "claude"

    def run(
        self, unit: WorkUnit, workspace: Workspace, sandbox: Sandbox, budget: Budget
    ) -> AgentOutcome:
        guard = BudgetGuard(
            budget, self.controls, self.kill_switch, unit.campaign, unit.key, self.day_budget
        )
        tools = Toolbox(unit, workspace, sandbox, self.graph, self.command_timeout_s)
        prompt = build_prompt(
            unit, self.campaign_brief, graph_context(self.graph, unit), self.notes
        )
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        steps: list[AgentStep] = []
        format_errors = 0
        summary = ""
        while True:
            stop = guard.check()
            if stop is not None:
                return self._outcome(workspace, steps, guard.spent, stop, guard.detail)
            estimate = self._estimate(messages)
            if not guard.reserve(estimate):
                return self._outcome(
                    workspace, steps, guard.spent, StopReason.BUDGET_DAY, guard.detail
                )
            try:
                response = self.model.complete(
                    SYSTEM, messages, TOOL_SPECS, self.max_tokens_per_turn
                )
            except FleetError as exc:
                guard.release(estimate)
                return self._outcome(workspace, steps, guard.spent, StopReason.ERROR, str(exc))
            usage = response.get("usage") or {}
            guard.record(usage_cost(_model_name(self.model), usage), estimate)
            content = response.get("content") or []
            messages.append({"role": "assistant", "content": content})
            calls = [b for b in content if b.get("type") == "tool_use"]
            if not calls:
                format_errors += 1
                if format_errors >= self.max_format_errors:
                    detail = f"{format_errors} consecutive turns without a tool call"
                    return self._outcome(
                        workspace, steps, guard.spent, StopReason.FORMAT_ERRORS, detail
                    )
                messages.append({"role": "user", "content": "Reply with a tool call."})
                continue
            results, finished, bad = [], False, 0
            for call in calls:
                name, args = call.get("name", ""), call.get("input")
                missing = missing_arguments(name, args) if name in _TOOL_NAMES else None
                if missing is None or missing:
                    bad += 1
                    text = (
                        f"unknown tool {name!r}"
                        if missing is None
                        else f"{name}: missing arguments {missing}"
                    )
                    ok = False
                elif guard.tool_calls_spent() or guard.killed():
                    ok, text = False, "refused: the tool-call budget is spent or the unit is killed"
                else:
                    guard.tool_calls += 1
                    ok, text = tools.call(name, args)
                    step = AgentStep(len(steps), name, dict(args), text, ok)
                    steps.append(step)
                    if self.on_step is not None:
                        self.on_step(step, workspace_diff(workspace))
                    if name == "finish":
                        finished, summary = True, str(args.get("summary", ""))
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": text,
                        "is_error": not ok,
                    }
                )
            format_errors = format_errors + 1 if bad == len(calls) else 0
            messages.append({"role": "user", "content": results})
            if finished:
                return self._outcome(workspace, steps, guard.spent, StopReason.FINISHED, summary)
            if format_errors >= self.max_format_errors:
                detail = f"{format_errors} consecutive turns of malformed tool calls"
                return self._outcome(
                    workspace, steps, guard.spent, StopReason.FORMAT_ERRORS, detail
                )

    def _estimate(self, messages: list[dict[str, Any]]) -> Cost:
        """The next call's worst case: the prompt (~4 characters a token) plus a full reply."""
        chars = len(SYSTEM) + len(json.dumps(messages)) + len(json.dumps(TOOL_SPECS))
        usage = {"input_tokens": chars // 4 + 1, "output_tokens": self.max_tokens_per_turn}
        return usage_cost(_model_name(self.model), usage)

    def _outcome(
        self,
        workspace: Workspace,
        steps: list[AgentStep],
        cost: Cost,
        stop: StopReason,
        detail: str,
    ) -> AgentOutcome:
        return AgentOutcome(workspace_diff(workspace), tuple(steps), cost, stop, detail)


_TOOL_NAMES = frozenset(t["name"] for t in TOOL_SPECS)


def _model_name(model: Model) -> str:
    return str(getattr(model, "model", model.name))
