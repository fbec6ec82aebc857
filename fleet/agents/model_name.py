"""The model used when nothing names one (see ``fleet.agents.anthropic_model.resolve_model``).

Its own module so that the CLI's option defaults read it without importing the Anthropic
agent (and ``fleet.types`` with it: ~20 ms of every ``fleet`` process's start).
"""

from __future__ import annotations

__all__ = ["DEFAULT_MODEL"]

# claude-sonnet-4-5 reached its end of life on 2026-11-30 (the SDK warns on every request).
DEFAULT_MODEL = "claude-sonnet-4-6"
