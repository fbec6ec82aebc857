"""The Claude agent's context: kept under a token budget, and marked for prompt caching.

``trim_context`` replaces the oldest tool results (never the first user turn, never the last
``keep_recent`` messages) by a one-line note until the conversation fits the budget; the model
can always read a symbol again. ``cache_breakpoints`` puts ``cache_control`` on the system
prompt, the tool list and the first user turn: the part of every request that never changes, so
each later turn reads it from the cache (a tenth of the input price) instead of paying it again.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["cache_breakpoints", "estimate_tokens", "trim_context"]

EPHEMERAL = {"type": "ephemeral"}
CHARS_PER_TOKEN = 4
MIN_CACHEABLE_TOKENS = 1024  # the API caches no shorter prefix (Sonnet, Opus; Haiku: 2048)


def estimate_tokens(system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
                    ) -> int:
    """The request's size in tokens, at ~4 characters a token (no tokenizer call)."""
    chars = len(system) + len(json.dumps(messages)) + len(json.dumps(tools))
    return chars // CHARS_PER_TOKEN + 1


def trim_context(system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 budget_tokens: int, keep_recent: int = 6) -> int:
    """Trim old tool results in place, oldest first, until the request fits ``budget_tokens``;
    returns how many were trimmed."""
    trimmed = 0
    for message in messages[1 : max(1, len(messages) - keep_recent)]:
        if estimate_tokens(system, messages, tools) <= budget_tokens:
            break
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            text = block.get("content")
            if block.get("type") == "tool_result" and isinstance(text, str) and (
                    not text.startswith("[trimmed")):
                block["content"] = (f"[trimmed to keep the context small: {len(text)} "
                                    "characters of an earlier tool result; call the tool again "
                                    "if you need it]")
                trimmed += 1
    return trimmed


Blocks = list[dict[str, Any]]


def cache_breakpoints(system: str, messages: Blocks, tools: Blocks
                      ) -> tuple[str | Blocks, Blocks, Blocks]:
    """Copies of the request's parts with ``cache_control`` on the system prompt, the last
    tool (the whole tool list is cached up to it) and the first user turn; the parts unchanged
    when that prefix is shorter than the API would cache."""
    if estimate_tokens(system, messages[:1], tools) < MIN_CACHEABLE_TOKENS:
        return system, messages, tools
    system_blocks: list[dict[str, Any]] = [
        {"type": "text", "text": system, "cache_control": EPHEMERAL}]
    tools = [dict(t) for t in tools]
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    messages = list(messages)
    if messages and messages[0].get("role") == "user":
        first = messages[0]["content"]
        blocks: list[dict[str, Any]] = ([{"type": "text", "text": first}]
                                        if isinstance(first, str) else [dict(b) for b in first])
        if blocks:
            blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
        messages[0] = {**messages[0], "content": blocks}
    return system_blocks, messages, tools
