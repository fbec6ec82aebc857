"""The one retry backoff of fleet-pipelines: exponential, capped, with jitter.

Used by the lease store's ``acquire_all`` loop (``full`` jitter: many workers contend for the same
symbols, a uniform wait in ``[0, cap)`` spreads them best), the unit runner's requeue of a unit
whose leases were refused, the Anthropic model's retries of rate limits and overload and an
integration's retry of its ledger checkpoint note when another one moved the notes ref (``equal``
jitter: at least half the step, so a retry never comes right back; a ``retry-after`` the server
sent wins over both).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Literal

__all__ = ["backoff_s"]


def backoff_s(attempt: int, base_s: float, max_s: float,
              jitter: Literal["full", "equal"] = "full",
              rng: Callable[[], float] = random.random) -> float:
    """The wait before retry ``attempt + 1`` (``attempt`` counts from 0), with
    ``cap = min(max_s, base_s * 2**attempt)``: uniform in ``[0, cap)`` (``full``) or in
    ``[cap/2, cap)`` (``equal``)."""
    cap = min(max_s, base_s * 2 ** min(attempt, 62))
    return cap * rng() if jitter == "full" else cap * (0.5 + rng() / 2)
