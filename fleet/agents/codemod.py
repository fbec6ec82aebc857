"""``CodemodAgent``: the offline, deterministic agent that applies a campaign's libcst codemod.

It rewrites exactly the unit's symbols (the byte spans of its write set, less nested symbols the
unit does not own; imports the rewrite needs are fixed at module level, which is in the unit's
write set as ``path::<module>`` when the codemod declares ``EDITS_IMPORTS``), in the unit's
workspace only, one step per file. Each step is recorded in the outcome's transcript and, when a
ledger is given, as an ``agent.step`` event (plus one ``agent.outcome``). It runs no commands:
the patch is ``git diff`` of the worktree against the unit's base commit, taken by the
orchestration.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from libcst.codemod import TransformFailure, TransformSkip, TransformSuccess

from fleet.campaigns.codemods import apply_codemod, target_params
from fleet.campaigns.codemods.requirements import declarations_step
from fleet.campaigns.spec import Campaign
from fleet.errors import GitError
from fleet.forge.worktree import workspace_diff
from fleet.graph import read_source
from fleet.protocols import Ledger, StepCallback
from fleet.types import (
    AgentOutcome,
    AgentStep,
    Budget,
    Cost,
    StopReason,
    Workspace,
    WorkUnit,
)
from fleet.verify.spans import decode_source

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph
    from sandbox import Sandbox

__all__ = ["CodemodAgent", "derived_params", "unit_spans"]


def _utf8_offset(raw: bytes, offset: int, encoding: str) -> int:
    """The graph's spans are offsets into the file's bytes; the codemods take offsets into the
    UTF-8 encoding of its text."""
    return len(raw[:offset].decode(encoding, errors="replace").encode("utf-8"))


def unit_spans(graph: SymbolGraph | None, unit: WorkUnit, path: str) -> list[tuple[int, int]]:
    """Byte spans of ``path`` that the unit owns: each write-set symbol's span minus the spans of
    symbols nested in it that the unit neither writes nor has findings in (a write lease on a
    class covers its members, so the findings' own symbols are owned too). Without a graph: the
    findings' spans."""
    if graph is None:
        return sorted((f.start_byte, f.end_byte) for f in unit.findings if f.path == path)
    owned = {s for s in unit.write_set if s.split("::", 1)[0] == path}
    owned |= {f.symbol for f in unit.findings if f.path == path}
    spans: list[tuple[int, int]] = []
    for sid in sorted(owned):
        sym = graph.symbols.get(sid)
        if sym is None:
            continue
        holes = sorted(
            (c.start_byte, c.end_byte)
            for c in graph.symbols_in(path)
            if c.parent == sid and c.id not in owned
        )
        start = sym.start_byte
        for hole_start, hole_end in holes:
            if hole_start > start:
                spans.append((start, hole_start))
            start = max(start, hole_end)
        if start < sym.end_byte:
            spans.append((start, sym.end_byte))
    return sorted(spans)


def derived_params(
    codemod: str, params: dict[str, Any], graph: SymbolGraph | None
) -> dict[str, Any]:
    """Parameters a codemod gets from the graph: for ``pydantic-v2`` the dotted names of every
    model class in the repository (subclasses of a v1 ``BaseModel``, transitively)."""
    out = dict(params)
    if codemod != "pydantic-v2" or graph is None or "models" in out:
        return out
    bases = {f"{m}.BaseModel" for m in ("pydantic", "pydantic.v1", *out.get("v1_modules", ()))}
    inherits = [r for r in graph.references if r.kind == "inherit"]
    models: set[str] = set()
    changed = True
    while changed:
        changed = False
        for ref in inherits:
            head, _, rest = ref.name.partition(".")
            imported = graph.imports.get(ref.path, {}).get(head)
            name = f"{imported}.{rest}" if imported and rest else imported or ref.name
            target = graph.dotted(ref.target) if ref.target in graph.symbols else None
            if (name in bases or name in models or target in models) and ref.src in graph.symbols:
                dotted = graph.dotted(ref.src)
                if dotted not in models:
                    models.add(dotted)
                    changed = True
    out["models"] = sorted(models)
    return out


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class CodemodAgent:
    """Implements :class:`fleet.protocols.Agent` with ``campaign.fix.codemod``."""

    name = "codemod"

    def __init__(
        self,
        campaign: Campaign,
        graph: SymbolGraph | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        self.campaign = campaign
        self.graph = graph
        self.ledger = ledger

    def _record(self, unit: WorkUnit, kind: str, payload: dict[str, Any]) -> None:
        if self.ledger is not None:
            self.ledger.append(kind, payload, unit=unit.key, campaign=unit.campaign,
                               actor=self.name)

    def run(
        self, unit: WorkUnit, workspace: Workspace, sandbox: Sandbox | None, budget: Budget,
        on_step: StepCallback | None = None,
    ) -> AgentOutcome:
        """Apply the codemod to the unit's spans; ``sandbox`` is never used (no commands run),
        so ``None`` is accepted where no backend is available. ``on_step`` gets each file's step
        with the worktree's diff after it."""
        started = time.monotonic()
        codemod = self.campaign.fix.codemod
        if codemod is None:
            return self._finish(unit, "", [], StopReason.NOTHING_TO_DO,
                                f"campaign {self.campaign.name} has no codemod")
        params = {**target_params(codemod, workspace.path),
                  **derived_params(codemod, self.campaign.fix.params, self.graph)}
        steps: list[AgentStep] = []
        stop = StopReason.FINISHED
        for path in self._paths(unit):
            if budget.max_wall_s is not None and time.monotonic() - started > budget.max_wall_s:
                stop = StopReason.BUDGET_WALL
                break
            if budget.max_tool_calls is not None and len(steps) >= budget.max_tool_calls:
                stop = StopReason.BUDGET_TOOL_CALLS
                break
            steps.append(self._apply(unit, workspace, codemod, params, path, len(steps)))
            if on_step is not None:
                try:
                    on_step(steps[-1], workspace_diff(workspace))
                except GitError as exc:
                    return self._finish(unit, "", steps, StopReason.ERROR, str(exc))
        if self.campaign.fix.requirements and stop is StopReason.FINISHED:
            step = declarations_step(unit, workspace.path, self.campaign.fix.requirements,
                                     len(steps))
            steps.append(step)
            self._record(unit, "agent.step", {"index": step.index, "action": step.action,
                                              "arguments": step.arguments, "result": step.result,
                                              "ok": step.ok})
        try:
            patch = workspace_diff(workspace)
        except GitError as exc:
            return self._finish(unit, "", steps, StopReason.ERROR, str(exc))
        if not _is_utf8(patch):
            # The ledger, the stores and the forges keep a patch as UTF-8 text.
            return self._finish(unit, "", steps, StopReason.ERROR,
                                "the rewrite gives a patch that is not UTF-8 text (a file in a "
                                "legacy encoding); convert the file to UTF-8 to fix it")
        failed = [s for s in steps if not s.ok]
        if stop is StopReason.FINISHED and failed and not patch:
            stop, detail = StopReason.ERROR, failed[0].result
        elif stop is StopReason.FINISHED and not patch:
            stop, detail = StopReason.NOTHING_TO_DO, "the codemod changed nothing"
        else:
            detail = f"{len(steps)} file(s), {len(failed)} failed"
        return self._finish(unit, patch, steps, stop, detail)

    def _paths(self, unit: WorkUnit) -> list[str]:
        paths: Iterable[str] = list(unit.paths) or sorted({f.path for f in unit.findings})
        return sorted(p for p in paths if p.endswith((".py", ".pyi")))

    def _apply(
        self, unit: WorkUnit, ws: Workspace, codemod: str, params: dict[str, Any], path: str,
        index: int,
    ) -> AgentStep:
        spans = unit_spans(self.graph, unit, path)
        file = ws.path / path
        arguments: dict[str, Any] = {"path": path, "codemod": codemod, "spans": spans}
        try:
            raw, refused = read_source(ws.path, path)  # the one source reader (fleet.graph)
            if raw is None:
                raise OSError(f"skipped {path}: {refused}")
            source, encoding = decode_source(raw)
        except (OSError, SyntaxError, UnicodeDecodeError) as exc:
            step = AgentStep(index, "codemod", arguments, f"cannot read {path}: {exc}", ok=False)
        else:
            if encoding != "utf-8":
                spans = [(_utf8_offset(raw, a, encoding), _utf8_offset(raw, b, encoding))
                         for a, b in spans]
            result = apply_codemod(codemod, source, params, spans, path)
            if isinstance(result, TransformSuccess):
                changed = result.code != source
                try:
                    if changed:
                        file.write_bytes(result.code.encode(encoding))
                except UnicodeEncodeError as exc:
                    step = AgentStep(index, "codemod", arguments,
                                     f"failed: the rewrite does not fit {encoding}: {exc}",
                                     ok=False)
                else:
                    warnings = "; ".join(result.warning_messages)
                    text = "rewrote" if changed else "no change"
                    step = AgentStep(index, "codemod", arguments,
                                     f"{text}{': ' + warnings if warnings else ''}")
            elif isinstance(result, TransformFailure):
                step = AgentStep(index, "codemod", arguments, f"failed: {result.error}", ok=False)
            else:
                assert isinstance(result, TransformSkip)
                step = AgentStep(index, "codemod", arguments, f"skipped: {result.skip_description}")
        self._record(unit, "agent.step", {"index": step.index, "action": step.action,
                                          "arguments": step.arguments, "result": step.result,
                                          "ok": step.ok})
        return step

    def _finish(
        self, unit: WorkUnit, patch: str, steps: list[AgentStep], stop: StopReason, detail: str
    ) -> AgentOutcome:
        self._record(unit, "agent.outcome", {"stop_reason": stop.value, "detail": detail,
                                             "steps": len(steps), "patch_bytes": len(patch)})
        return AgentOutcome(patch, tuple(steps), Cost(), stop, detail)
