"""Agents: ``CodemodAgent`` (offline, deterministic, applies a campaign codemod),
``ClaudeAgent`` (an Anthropic Messages tool-use loop whose tools run in the unit sandbox),
``ScriptedModel`` and the local fake Messages API used to test it.

Heavy modules (the anthropic SDK) load lazily: ``from fleet.agents.claude import ClaudeAgent``.
"""
