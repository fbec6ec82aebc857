"""``CommandAgent``: a command-line fixer as the agent (``fix.command`` of a campaign).

The command (``ruff check --fix --select UP005 {files}``, ``django-upgrade --target-version 4.2
{files}``, ``bump-pydantic {files}``) runs once in the unit's sandbox, in its worktree, over the
unit's files, with the campaign's tool environment (``tool.pip``, see
:mod:`fleet.campaigns.toolenv`) first on ``PATH``; its diff is the candidate patch, judged by the
same gates as any agent's (an edit outside the unit's write set is rejected by ``lease_scope``).

A fixer that is missing, exits with a code outside ``fix.exit_codes``, hangs past
``fix.timeout_s`` or whose tools cannot be installed ends the unit with ``StopReason.ERROR`` and
the tool's own last lines; the repository is untouched (the worktree is thrown away).

With ``fix.requirements`` the unit also writes the files declaring a moved requirement (the
planner leases them): after the command has changed the code, the agent's second step moves
the declared pin there (:func:`fleet.campaigns.codemods.requirements.declarations_step`, the
codemod agent's step), so the gates judge the patched tree in an environment of the new range.
Those files are not handed to the command unless the unit has a finding in them; a command that
changed nothing moves no pin (the unit is ``nothing_to_do``: a pin moved without the code would
break the project).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fleet.campaigns.codemods.requirements import declarations_step, unit_declarations
from fleet.campaigns.spec import Campaign
from fleet.campaigns.toolenv import ToolInstallFailed, command_env, expand_command, tool_bin
from fleet.errors import GitError
from fleet.forge.worktree import workspace_diff
from fleet.protocols import StepCallback
from fleet.types import AgentOutcome, AgentStep, Budget, Cost, StopReason, Workspace, WorkUnit
from sandbox import EndReason, ExecResult, Limits

if TYPE_CHECKING:
    from sandbox import Sandbox

__all__ = ["CommandAgent", "last_lines"]


def last_lines(result: ExecResult, count: int = 15) -> str:
    """The tool's own last lines: stderr's, then stdout's."""
    text = "\n".join(t for t in (result.stdout.strip(), result.stderr.strip()) if t)
    return "\n".join(text.splitlines()[-count:]) or "(no output)"


class CommandAgent:
    """Implements :class:`fleet.protocols.Agent` with ``campaign.fix.command``."""

    name = "command"

    def __init__(self, campaign: Campaign) -> None:
        if not campaign.fix.command:
            raise ValueError(f"campaign {campaign.name} has no fix.command")
        self.campaign = campaign

    def run(
        self, unit: WorkUnit, workspace: Workspace, sandbox: Sandbox, budget: Budget,
        on_step: StepCallback | None = None,
    ) -> AgentOutcome:
        fix = self.campaign.fix
        pins = set(unit_declarations(unit, workspace.path)) if fix.requirements else set()
        pins -= {f.path for f in unit.findings}
        files = [p for p in unit.paths if p not in pins and (workspace.path / p).is_file()]
        if not files:
            return _outcome("", (), StopReason.NOTHING_TO_DO, "the unit has no files")
        try:
            bin_dir = tool_bin(self.campaign.tool)
        except ToolInstallFailed as exc:
            return _outcome("", (), StopReason.ERROR, str(exc))
        argv = expand_command(fix.command, files)
        if bin_dir is not None and (bin_dir / argv[0]).is_file():
            argv[0] = str(bin_dir / argv[0])
        timeout = min(fix.timeout_s, budget.max_wall_s or fix.timeout_s)
        result = sandbox.run(argv, cwd=Path(workspace.path), env=command_env(bin_dir),
                             timeout=timeout, limits=Limits(wall_s=timeout))
        tail = last_lines(result)
        ok = result.reason is EndReason.EXITED and result.exit_code in fix.exit_codes
        step = AgentStep(0, "command", {"argv": argv, "files": files},
                         f"exit code {result.exit_code} ({result.reason})\n{tail}", ok)
        try:
            patch = workspace_diff(workspace)
        except GitError as exc:
            return _outcome("", (step,), StopReason.ERROR, str(exc))
        if on_step is not None:
            on_step(step, patch)
        if not ok:
            why = (f"timed out after {timeout:.0f}s" if result.reason is EndReason.TIMEOUT
                   else f"exited {result.exit_code}" if result.reason is EndReason.EXITED
                   else f"stopped: {result.reason}")
            return _outcome("", (step,), StopReason.ERROR, f"{fix.command[0]} {why}:\n{tail}")
        if not patch:
            return _outcome("", (step,), StopReason.NOTHING_TO_DO,
                            f"{fix.command[0]} changed nothing:\n{tail}")
        steps: tuple[AgentStep, ...] = (step,)
        if fix.requirements:
            pin = declarations_step(unit, workspace.path, fix.requirements, 1)
            steps += (pin,)
            try:
                patch = workspace_diff(workspace)
            except GitError as exc:
                return _outcome("", steps, StopReason.ERROR, str(exc))
            if on_step is not None:
                on_step(pin, patch)
            if not pin.ok:
                return _outcome("", steps, StopReason.ERROR, pin.result)
        return _outcome(patch, steps, StopReason.FINISHED,
                        f"{fix.command[0]} over {len(files)} file(s)")


def _outcome(patch: str, steps: tuple[AgentStep, ...], stop: StopReason, detail: str
             ) -> AgentOutcome:
    return AgentOutcome(patch, steps, Cost(), stop, detail)
