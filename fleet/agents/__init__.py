"""Agents: ``CodemodAgent`` (offline, deterministic, applies a campaign codemod),
``CommandAgent`` (a command-line fixer such as ruff, django-upgrade or bump-pydantic, run in the
unit's sandbox), ``ClaudeAgent`` (an Anthropic Messages tool-use loop whose tools run in the unit
sandbox), ``agent_for`` (the agent a campaign runs with), ``ScriptedModel`` and the local fake
Messages API used to test it. All implement ``fleet.protocols.Agent`` / ``Model``.

The names load lazily (``fleet.agents.ClaudeAgent`` imports ``fleet.agents.claude`` on first use),
so ``fleet.unit`` importing ``fleet.agents.rollback`` does not load libcst or the anthropic SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "AnthropicModel",
    "BudgetGuard",
    "ClaudeAgent",
    "CodemodAgent",
    "CommandAgent",
    "DayBudget",
    "FakeMessagesServer",
    "ScriptedModel",
    "agent_for",
    "resolve_model",
    "rollback_unit",
    "step_recorder",
]

_MODULES = {
    "AnthropicModel": "anthropic_model",
    "resolve_model": "anthropic_model",
    "BudgetGuard": "guard",
    "DayBudget": "guard",
    "ClaudeAgent": "claude",
    "CodemodAgent": "codemod",
    "CommandAgent": "command",
    "FakeMessagesServer": "fake_messages",
    "ScriptedModel": "scripted",
    "agent_for": "select",
    "rollback_unit": "rollback",
    "step_recorder": "rollback",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'fleet.agents' has no attribute {name!r}")
    return getattr(importlib.import_module(f"fleet.agents.{module}"), name)
