"""``agent_for``: the agent a campaign runs with, wired from the campaign file.

``kind`` ``auto`` takes the campaign's own fixer (``fix.command`` -> ``CommandAgent``,
``fix.codemod`` -> ``CodemodAgent``); ``claude`` is the LLM agent, briefed with the campaign's
description and ``fix.prompt``, offered the campaign's ``tools``, held to its ``budgets.daily_usd``
through the store's controls, with the model of :func:`~fleet.agents.anthropic_model.resolve_model`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fleet.agents.guard import DayBudget
from fleet.campaigns.spec import Campaign
from fleet.errors import ConfigError
from fleet.protocols import Agent, Controls, Model

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph
    from fleet.protocols import Ledger

__all__ = ["AGENT_KINDS", "agent_for", "campaign_brief"]

AGENT_KINDS = ("auto", "codemod", "command", "claude")


def campaign_brief(campaign: Campaign) -> str:
    """What the LLM agent is told the campaign is: its description, then ``fix.prompt``."""
    parts = [" ".join(campaign.description.split())]
    if campaign.fix.prompt:
        parts.append("## What to do\n" + campaign.fix.prompt.strip())
    return "\n\n".join(parts)


def agent_for(
    kind: str,
    campaign: Campaign,
    *,
    graph: SymbolGraph | None = None,
    ledger: Ledger | None = None,
    controls: Controls | None = None,
    notes: tuple[str, ...] = (),
    model: str | Model | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
) -> Agent:
    """The agent of ``kind`` for ``campaign``; ``ConfigError`` when the campaign has no fixer of
    that kind or the Claude agent has no API key. ``model``: a model name (``--model``) or a
    ready ``Model`` (a ``ScriptedModel`` in tests); ``api_key``: the Messages API key (default:
    ``$ANTHROPIC_API_KEY``)."""
    if kind not in AGENT_KINDS:
        raise ConfigError(f"unknown agent {kind!r} (one of {', '.join(AGENT_KINDS)})")
    fix = campaign.fix
    if kind == "auto":
        kind = "command" if fix.command else "codemod" if fix.codemod else "claude"
    if kind == "command":
        if not fix.command:
            raise ConfigError(f"campaign {campaign.name} has no fix.command")
        from fleet.agents.command import CommandAgent

        return CommandAgent(campaign)
    if kind == "codemod":  # without a codemod, each unit ends nothing_to_do, saying so
        from fleet.agents.codemod import CodemodAgent

        return CodemodAgent(campaign, graph=graph, ledger=ledger)
    from fleet.agents.anthropic_model import AnthropicModel, resolve_model
    from fleet.agents.claude import ClaudeAgent

    if model is None or isinstance(model, str):
        model = AnthropicModel(model=resolve_model(model, campaign.model), base_url=base_url,
                               api_key=api_key)
    return ClaudeAgent(model=model, campaign_brief=campaign_brief(campaign), notes=notes,
                       graph=graph, controls=controls,
                       kill_switch=controls.engaged if controls is not None else None,
                       day_budget=DayBudget(max_cost_usd=campaign.daily_budget_usd),
                       tools=campaign.tools)
