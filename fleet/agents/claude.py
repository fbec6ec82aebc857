"""``ClaudeAgent``: a Messages API tool-use loop (mini-swe-agent style: run -> step -> query ->
execute) whose tools edit the unit's worktree symbol by symbol and run commands in its sandbox.

The loop stops on ``finish``, on a budget or the kill switch (checked before every model call),
on a ``refusal`` (with the model's reason), or after ``max_format_errors`` consecutive malformed
turns; each is an ``AgentOutcome`` stop reason. A reply cut at ``max_tokens`` is continued.
The context is kept under ``context_tokens`` by trimming old tool results. The model is any
``fleet.protocols.Model``: ``AnthropicModel`` in production (with prompt caching),
``ScriptedModel`` or ``AnthropicModel`` against the local fake Messages API in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fleet.agents._context import estimate_tokens, trim_context
from fleet.agents._tools import TOOL_SPECS, Toolbox, missing_arguments
from fleet.agents.anthropic_model import AnthropicModel, usage_cost
from fleet.agents.guard import BudgetGuard, Controls, DayBudget
from fleet.errors import FleetError
from fleet.forge.worktree import workspace_diff
from fleet.protocols import Model, StepCallback
from fleet.types import AgentOutcome, AgentStep, Budget, Cost, StopReason, Workspace, WorkUnit
from sandbox import Sandbox

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

__all__ = ["AnthropicModel", "ClaudeAgent", "build_prompt", "graph_context"]

SYSTEM = """You are one agent of a fleet fixing one work unit of a code campaign.
Work only through the tools. You may change only the symbols in your write set; every other
symbol is leased to someone else and an edit there is refused. Keep behaviour unchanged except
where the campaign asks; run the tests that reach your symbols before you finish. Independent
gates (tests, lease scope, security lens, an adversarial reviewer) judge your patch afterwards.
Call `finish` with a summary when done."""

CONTINUE = "Your reply was cut off at the output limit. Continue where you stopped."


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


def graph_context(graph: SymbolGraph | None, unit: WorkUnit, limit: int = 30) -> str:
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
class _Run:
    """The state of one ``ClaudeAgent.run``."""

    unit: WorkUnit
    workspace: Workspace
    guard: BudgetGuard
    tools: Toolbox
    callbacks: list[StepCallback]
    messages: list[dict[str, Any]]
    steps: list[AgentStep] = field(default_factory=list)
    format_errors: int = 0
    continuations: int = 0
    trimmed: int = 0
    stop: StopReason | None = None
    detail: str = ""

    def end(self, stop: StopReason, detail: str) -> None:
        self.stop, self.detail = stop, detail


@dataclass
class ClaudeAgent:
    """Implements ``fleet.protocols.Agent``. Never raises for an agent-level failure.

    ``tools``: the campaign's tool names offered to the model (``finish`` always; empty = all).
    ``on_step``: the caller's own step callback, called beside the one ``run`` is given."""

    model: Model
    campaign_brief: str = ""
    notes: Sequence[str] = ()
    graph: SymbolGraph | None = None
    controls: Controls | None = None
    kill_switch: Callable[[], bool] | None = None
    day_budget: DayBudget = field(default_factory=DayBudget)
    tools: Sequence[str] = ()
    max_format_errors: int = 3
    max_continuations: int = 3
    max_tokens_per_turn: int = 4096
    context_tokens: int = 120_000
    keep_recent: int = 6
    command_timeout_s: float = 300.0
    on_step: StepCallback | None = None
    name: str = "claude"

    @property
    def tool_specs(self) -> list[dict[str, Any]]:
        offered = set(self.tools) | {"finish"}
        return [t for t in TOOL_SPECS if not self.tools or t["name"] in offered]

    def run(
        self, unit: WorkUnit, workspace: Workspace, sandbox: Sandbox, budget: Budget,
        on_step: StepCallback | None = None,
    ) -> AgentOutcome:
        guard = BudgetGuard(budget, self.controls, self.kill_switch, unit.campaign, unit.key,
                            self.day_budget)
        prompt = build_prompt(unit, self.campaign_brief, graph_context(self.graph, unit),
                              self.notes)
        run = _Run(unit, workspace, guard,
                   Toolbox(unit, workspace, sandbox, self.graph, self.command_timeout_s),
                   [c for c in (self.on_step, on_step) if c is not None],
                   [{"role": "user", "content": prompt}])
        while run.stop is None:
            self.step(run)
        assert run.stop is not None
        return AgentOutcome(workspace_diff(workspace), tuple(run.steps), guard.spent, run.stop,
                            run.detail)

    def step(self, run: _Run) -> None:
        """One turn: ask the model, then carry out what it answered."""
        response = self.query(run)
        if response is not None:
            self.execute(run, response)

    def query(self, run: _Run) -> dict[str, Any] | None:
        """The model's next reply, or None with ``run.stop`` set (budget, kill switch, fault)."""
        estimate = self._admit(run)
        if estimate is None:
            return None
        try:
            response = self.model.complete(SYSTEM, run.messages, self.tool_specs,
                                           self.max_tokens_per_turn)
        except FleetError as exc:
            run.guard.release(estimate)
            run.end(StopReason.ERROR, str(exc))
            return None
        run.guard.record(usage_cost(_model_name(self.model), response.get("usage") or {}),
                         estimate)
        return response

    def execute(self, run: _Run, response: dict[str, Any]) -> None:
        """Run the reply's tool calls and answer them, or handle a reply without any."""
        content = response.get("content") or []
        run.messages.append({"role": "assistant", "content": content})
        calls = [b for b in content if b.get("type") == "tool_use"]
        if response.get("stop_reason") == "refusal":
            return run.end(StopReason.REFUSED, _text(content) or "the model refused")
        if not calls:
            return self._no_calls(run, str(response.get("stop_reason") or ""))
        return self._answer(run, [self._call(run, call) for call in calls])

    def _admit(self, run: _Run) -> Cost | None:
        """The next call's worst-case cost, reserved against the day budget once the guard lets
        it happen and the context is trimmed to its budget; None with ``run.stop`` set when the
        call must not happen."""
        stop = run.guard.check()
        if stop is not None:
            run.end(stop, run.guard.detail)
            return None
        specs = self.tool_specs
        run.trimmed += trim_context(SYSTEM, run.messages, specs, self.context_tokens,
                                    self.keep_recent)
        estimate = self._estimate(run.messages, specs)
        if not run.guard.reserve(estimate):
            run.end(StopReason.BUDGET_DAY, run.guard.detail)
            return None
        return estimate

    def _answer(self, run: _Run, results: list[dict[str, Any]]) -> None:
        """Send the tool results back; a turn whose calls were all malformed counts towards
        ``max_format_errors`` (a good turn resets the count)."""
        bad = sum(1 for r in results if r.get("malformed"))
        run.format_errors = run.format_errors + 1 if bad == len(results) else 0
        run.messages.append({"role": "user", "content": [
            {k: v for k, v in r.items() if k != "malformed"} for r in results]})
        if run.stop is None and run.format_errors >= self.max_format_errors:
            run.end(StopReason.FORMAT_ERRORS,
                    f"{run.format_errors} consecutive turns of malformed tool calls")

    def _no_calls(self, run: _Run, stop_reason: str) -> None:
        if stop_reason in ("max_tokens", "pause_turn"):
            run.continuations += 1
            if run.continuations > self.max_continuations:
                return run.end(StopReason.ERROR, f"{run.continuations - 1} continuations and "
                               f"still cut off at {stop_reason}")
            run.messages.append({"role": "user", "content": CONTINUE})
            return None
        run.format_errors += 1
        if run.format_errors >= self.max_format_errors:
            return run.end(StopReason.FORMAT_ERRORS,
                           f"{run.format_errors} consecutive turns without a tool call")
        run.messages.append({"role": "user", "content": "Reply with a tool call."})
        return None

    def _call(self, run: _Run, call: dict[str, Any]) -> dict[str, Any]:
        """One tool call's ``tool_result`` block (``malformed`` marks an unknown or incomplete
        call, for the format-error count)."""
        name, args = call.get("name", ""), call.get("input")
        offered = {t["name"] for t in self.tool_specs}
        missing = missing_arguments(name, args) if name in offered else None
        if missing is None or missing or not isinstance(args, dict):
            text = (f"unknown tool {name!r} (offered: {', '.join(sorted(offered))})"
                    if missing is None else f"{name}: missing arguments {missing}")
            return _result(call, False, text, malformed=True)
        if run.guard.tool_calls_spent() or run.guard.killed():
            return _result(call, False, "refused: the tool-call budget is spent or the unit "
                           "is killed")
        run.guard.tool_calls += 1
        ok, text = run.tools.call(name, args)
        step = AgentStep(len(run.steps), name, dict(args), text, ok)
        run.steps.append(step)
        if run.callbacks:
            diff = workspace_diff(run.workspace)
            for callback in run.callbacks:
                callback(step, diff)
        if name == "finish":
            run.end(StopReason.FINISHED, str(args.get("summary", "")))
        return _result(call, ok, text)

    def _estimate(self, messages: list[dict[str, Any]], specs: list[dict[str, Any]]) -> Cost:
        """The next call's worst case: the prompt plus a full reply."""
        usage = {"input_tokens": estimate_tokens(SYSTEM, messages, specs),
                 "output_tokens": self.max_tokens_per_turn}
        return usage_cost(_model_name(self.model), usage)


def _result(call: dict[str, Any], ok: bool, text: str, malformed: bool = False
            ) -> dict[str, Any]:
    out = {"type": "tool_result", "tool_use_id": call.get("id", ""), "content": text,
           "is_error": not ok}
    return {**out, "malformed": True} if malformed else out


def _text(content: list[dict[str, Any]]) -> str:
    return " ".join(b.get("text", "") for b in content if b.get("type") == "text").strip()


def _model_name(model: Model) -> str:
    return str(getattr(model, "model", model.name))
