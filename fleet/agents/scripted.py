"""``ScriptedModel``: a ``Model`` that replays a scripted list of Messages-API-shaped responses.

The offline double of a chat model (mini-swe-agent's ``DeterministicModel``): tests and demos
give it the turns a model would take, and it records every request it was sent so a test can
check what the agent showed the model. Helpers build the response dicts.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.errors import FleetError

__all__ = ["ScriptExhausted", "ScriptedModel", "text_response", "tool_call", "tool_response"]

_ids = itertools.count(1)


class ScriptExhausted(FleetError):
    """The model was asked for more turns than its script holds."""


def text_response(text: str, *, input_tokens: int = 10, output_tokens: int = 10) -> dict[str, Any]:
    """A Messages API response holding one text block (``stop_reason`` ``end_turn``)."""
    return {
        "id": f"msg_scripted_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    """One ``tool_use`` block (the id is generated)."""
    return {"type": "tool_use", "id": f"toolu_{next(_ids):06d}", "name": name, "input": arguments}


def tool_response(
    *calls: dict[str, Any],
    text: str = "",
    input_tokens: int = 10,
    output_tokens: int = 10,
) -> dict[str, Any]:
    """A Messages API response whose content is ``text`` (if any) then the given tool calls."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.extend(calls)
    return {
        "id": f"msg_scripted_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


@dataclass
class ScriptedModel:
    """Replays ``responses`` in order; ``requests`` records what each call was sent.

    Raises ``ScriptExhausted`` when asked for one turn more than the script holds (an agent
    that does not stop is a bug the test should see). With ``repeat_last``, the last response
    is replayed forever instead (to drive an agent into a budget or a kill switch).
    """

    responses: Sequence[dict[str, Any]]
    name: str = "scripted"
    repeat_last: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)

    def complete(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int,
    ) -> dict[str, Any]:
        index = len(self.requests)
        self.requests.append(
            {
                "system": system,
                "messages": json.loads(json.dumps(messages)),
                "tools": [t["name"] for t in tools],
                "max_tokens": max_tokens,
            }
        )
        if index >= len(self.responses):
            if self.repeat_last and self.responses:
                return _fresh_ids(self.responses[-1])
            raise ScriptExhausted(
                f"ScriptedModel {self.name!r}: turn {index + 1} asked, script has "
                f"{len(self.responses)}"
            )
        return _fresh_ids(self.responses[index])

    @classmethod
    def from_turns(cls, turns: Iterable[dict[str, Any]], **kwargs: Any) -> ScriptedModel:
        return cls(list(turns), **kwargs)


def _fresh_ids(response: dict[str, Any]) -> dict[str, Any]:
    """A copy whose tool_use ids are unique even when a response is replayed."""
    out = json.loads(json.dumps(response))
    for block in out.get("content", []):
        if block.get("type") == "tool_use":
            block["id"] = f"toolu_{next(_ids):06d}"
    return dict(out)
