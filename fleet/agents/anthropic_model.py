"""``AnthropicModel``: the ``Model`` protocol over the anthropic SDK's Messages API.

The API key is read from the orchestrator's environment (``ANTHROPIC_API_KEY`` by default)
and never leaves this process: tools run in sandboxes with their own, explicit environment.
Rate limits (429), overload (529), 5xx and timeouts are retried with the one backoff of
:mod:`fleet.backoff`, honouring ``retry-after``; the SDK's own retries are off so that every
wait is that policy's and recorded in ``retries``. Every request carries ``cache_control`` on
the system prompt, the tools and the first user turn (:mod:`fleet.agents._context`).

The model is chosen by ``resolve_model``: the CLI's ``--model``, else the campaign's ``model:``,
else ``$FLEET_MODEL``, else ``DEFAULT_MODEL`` (a current Sonnet).
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fleet.agents._context import cache_breakpoints
from fleet.agents.model_name import DEFAULT_MODEL
from fleet.backoff import backoff_s
from fleet.errors import ConfigError, FleetError
from fleet.types import Cost

__all__ = ["DEFAULT_MODEL", "PRICES", "AnthropicModel", "ModelUnavailable", "resolve_model",
           "usage_cost"]

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

# USD per million tokens (input, output), by model-name prefix; the longest prefix wins.
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4": (15.0, 75.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-fake": (3.0, 15.0),
}
DEFAULT_PRICE = (3.0, 15.0)
CACHE_WRITE, CACHE_READ = 1.25, 0.1  # of the input price (5-minute cache)


def resolve_model(cli: str | None = None, campaign: str | None = None,
                  environ: dict[str, str] | None = None) -> str:
    """The model to use: ``cli`` (``--model``), the campaign's ``model:``, ``$FLEET_MODEL``,
    or ``DEFAULT_MODEL``."""
    env = os.environ if environ is None else environ
    return cli or campaign or env.get("FLEET_MODEL") or DEFAULT_MODEL


class ModelUnavailable(FleetError):
    """The model API kept failing (rate limits, overload, timeouts) past the retry budget,
    or refused the request outright."""


def usage_cost(model: str, usage: dict[str, Any]) -> Cost:
    """The cost of one response from the ``usage`` the API reported."""
    matches = [p for p in PRICES if model.startswith(p)]
    price_in, price_out = PRICES[max(matches, key=len)] if matches else DEFAULT_PRICE
    plain = int(usage.get("input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    cache_read = int(usage.get("cache_read_input_tokens") or 0)
    tokens_out = int(usage.get("output_tokens") or 0)
    usd = (plain * price_in + written * price_in * CACHE_WRITE + cache_read * price_in * CACHE_READ
           + tokens_out * price_out) / 1e6
    saved = (cache_read * price_in * (1 - CACHE_READ) - written * price_in * (CACHE_WRITE - 1)
             ) / 1e6
    return Cost(plain + written + cache_read, tokens_out, usd, saved)


@dataclass
class AnthropicModel:
    """A Messages API model. ``base_url`` points the SDK elsewhere (the local fake in tests).

    Raises ``ConfigError`` when the key is missing, ``ModelUnavailable`` when retries run out
    or the API refuses the request (4xx other than 408/409/429).
    """

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key_env: str = "ANTHROPIC_API_KEY"
    api_key: str | None = field(default=None, repr=False)  # given (a resolved EnvVar), else
    # $api_key_env; never in repr
    max_retries: int = 5
    timeout_s: float = 120.0
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    prompt_caching: bool = True
    retries: list[dict[str, Any]] = field(default_factory=list)
    name: str = field(default="", init=False)

    def __post_init__(self) -> None:
        import anthropic

        self.name = f"anthropic:{self.model}"
        key = self.api_key or os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(f"{self.api_key_env} is not set in the orchestrator's environment")
        self._anthropic = anthropic
        self._client = anthropic.Anthropic(
            api_key=key, base_url=self.base_url, timeout=self.timeout_s, max_retries=0
        )
        # closed by close(), or when the model is collected if an owner forgot to: never a
        # socket left for the interpreter to warn about
        self._closer = weakref.finalize(self, self._client.close)

    def close(self) -> None:
        """Close the SDK's HTTP connections (once; later calls do nothing)."""
        self._closer()

    def __enter__(self) -> AnthropicModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int,
    ) -> dict[str, Any]:
        sdk = self._anthropic
        system_arg: Any = system
        if self.prompt_caching:
            system_arg, messages, tools = cache_breakpoints(system, messages, tools)
        extra: dict[str, Any] = {"tools": tools} if tools else {}
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.messages.create(
                    model=self.model,
                    system=system_arg,
                    messages=messages,  # type: ignore[arg-type]
                    max_tokens=max_tokens,
                    **extra,
                )
                return dict(response.model_dump(mode="json", exclude_none=True))
            except sdk.APIStatusError as exc:
                if exc.status_code not in RETRYABLE_STATUS:
                    raise ModelUnavailable(f"{self.name}: HTTP {exc.status_code}: {exc}") from exc
                reason, headers = f"HTTP {exc.status_code}", exc.response.headers
            except (sdk.APITimeoutError, sdk.APIConnectionError) as exc:
                reason, headers = type(exc).__name__, None
            if attempt == self.max_retries:
                break
            wait = self._wait(attempt, headers)
            self.retries.append({"attempt": attempt + 1, "reason": reason, "wait_s": wait})
            self.sleep(wait)
        raise ModelUnavailable(
            f"{self.name}: gave up after {self.max_retries + 1} attempts ({reason})"
        )

    def _wait(self, attempt: int, headers: Any) -> float:
        """``retry-after`` (seconds) when the server sent one, else exponential with jitter."""
        if headers is not None:
            for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
                value = headers.get(name)
                if value:
                    try:
                        return min(float(value) * scale, self.backoff_max_s)
                    except ValueError:
                        pass
        return backoff_s(attempt, self.backoff_base_s, self.backoff_max_s, "equal")
