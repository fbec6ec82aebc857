"""The lease invariant checker used by the race tests and the benchmark.

Input: every hold observed by the competing processes, with ``start`` taken right after the grant
returned and ``end`` right before the release was sent (``time.monotonic``, one clock for every
process on a machine). The true hold interval contains ``[start, end]``, so two conflicting holds
whose recorded intervals overlap prove a violation; the checker never reports a false one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from fleet.store._leases import conflicts

__all__ = ["Hold", "check_holds"]


@dataclass(frozen=True)
class Hold:
    holder: str
    symbol: str
    mode: str
    token: int
    start: float
    end: float


def _root(symbol: str) -> str:
    return symbol.split("::", 1)[0]


def check_holds(holds: Iterable[Hold]) -> list[str]:
    """Violations: two holders holding conflicting leases at once, a fencing token issued twice,
    or write tokens of one symbol not increasing in grant order. Empty when all hold."""
    problems: list[str] = []
    items = list(holds)
    seen_tokens: dict[int, Hold] = {}
    for hold in items:
        other = seen_tokens.get(hold.token)
        if other is not None and other is not hold:
            problems.append(f"token {hold.token} issued twice: {other} and {hold}")
        seen_tokens[hold.token] = hold
    by_root: dict[str, list[Hold]] = defaultdict(list)
    for hold in items:
        by_root[_root(hold.symbol)].append(hold)
    for group in by_root.values():
        group.sort(key=lambda h: h.start)
        active: list[Hold] = []
        for hold in group:
            active = [a for a in active if a.end > hold.start]
            for a in active:
                if a.holder != hold.holder and conflicts(a.symbol, a.mode, hold.symbol, hold.mode):
                    problems.append(f"conflicting holds overlap: {a} and {hold}")
            active.append(hold)
    writes: dict[str, list[Hold]] = defaultdict(list)
    for hold in items:
        if hold.mode == "write":
            writes[hold.symbol].append(hold)
    for symbol, group in writes.items():
        group.sort(key=lambda h: h.start)
        tokens = [h.token for h in group]
        if tokens != sorted(tokens):
            problems.append(f"write tokens of {symbol} are not increasing in grant order: {tokens}")
    return problems
