"""Budgets and the kill switch, checked before each model call.

``BudgetGuard`` holds one task's limits (``fleet.types.Budget``) and, when given the store's
controls, the per-day budget of a campaign shared by every process through the store's atomic
``spend``. ``check()`` says why the next call must not happen (a ``StopReason``) or ``None``;
``reserve(estimate)`` holds the call's worst case against the day budget (atomic in the store);
``record(cost, reserved)`` books the usage the API reported and trues up the reservation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from fleet.protocols import Controls
from fleet.types import Budget, Cost, StopReason

__all__ = ["BudgetGuard", "Controls", "DayBudget"]


@dataclass(frozen=True)
class DayBudget:
    """The per-day budget of one campaign (``None`` = unlimited)."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None


@dataclass
class BudgetGuard:
    budget: Budget
    controls: Controls | None = None
    kill_switch: Callable[[], bool] | None = None
    campaign: str = ""
    unit: str = ""
    day: DayBudget = field(default_factory=DayBudget)
    clock: Callable[[], float] = time.monotonic
    spent: Cost = field(default_factory=Cost)
    tool_calls: int = 0
    detail: str = ""

    def __post_init__(self) -> None:
        self.started = self.clock()

    @property
    def day_scope(self) -> str:
        return f"day:{datetime.now(UTC).date().isoformat()}:{self.campaign}"

    def check(self) -> StopReason | None:
        """Why the next model call must not happen, or ``None`` when it may."""
        b = self.budget
        if self.killed():
            self.detail = "the kill switch is engaged"
            return StopReason.KILLED
        if b.max_tool_calls is not None and self.tool_calls >= b.max_tool_calls:
            self.detail = f"{self.tool_calls} tool calls >= budget {b.max_tool_calls}"
            return StopReason.BUDGET_TOOL_CALLS
        if b.max_tokens is not None and self.spent.tokens >= b.max_tokens:
            self.detail = f"{self.spent.tokens} tokens >= budget {b.max_tokens}"
            return StopReason.BUDGET_TOKENS
        if b.max_cost_usd is not None and self.spent.usd >= b.max_cost_usd:
            self.detail = f"${self.spent.usd:.4f} >= budget ${b.max_cost_usd:.4f}"
            return StopReason.BUDGET_COST
        elapsed = self.clock() - self.started
        if b.max_wall_s is not None and elapsed >= b.max_wall_s:
            self.detail = f"{elapsed:.1f}s wall >= budget {b.max_wall_s:.1f}s"
            return StopReason.BUDGET_WALL
        return None

    def reserve(self, estimate: Cost) -> bool:
        """Reserve the next call's worst-case cost against the campaign's day budget, through
        the store's atomic spend (so concurrent processes cannot overshoot together). False
        (and ``detail`` set) when the day budget cannot cover it."""
        if self.controls is None or not (self.day.max_cost_usd or self.day.max_tokens):
            return True
        ok = self.controls.spend(
            self.day_scope, estimate.usd, estimate.tokens, self.day.max_cost_usd,
            self.day.max_tokens,
        )
        if not ok:
            self.detail = (
                f"the day budget of campaign {self.campaign!r} cannot cover the next call "
                f"(up to ${estimate.usd:.4f}, {estimate.tokens} tokens)"
            )
        return ok

    def release(self, reserved: Cost) -> None:
        """Give back a reservation whose call did not happen."""
        if self.controls is not None and (self.day.max_cost_usd or self.day.max_tokens):
            self.controls.spend(self.day_scope, -reserved.usd, -reserved.tokens, None, None)

    def tool_calls_spent(self) -> bool:
        limit = self.budget.max_tool_calls
        return limit is not None and self.tool_calls >= limit

    def killed(self) -> bool:
        if self.kill_switch is not None and self.kill_switch():
            return True
        return self.controls is not None and self.controls.engaged()

    def record(self, cost: Cost, reserved: Cost | None = None) -> None:
        """Book one call's reported usage: the task total, and in the store the day scope
        (trued up against the reservation) and the task scope."""
        self.spent = self.spent + cost
        if self.controls is None:
            return
        held = reserved if reserved is not None and self.day_enforced else Cost()
        self.controls.spend(
            self.day_scope, cost.usd - held.usd, cost.tokens - held.tokens, None, None
        )
        if self.unit:
            self.controls.spend(f"task:{self.unit}", cost.usd, cost.tokens, None, None)

    @property
    def day_enforced(self) -> bool:
        return bool(self.day.max_cost_usd or self.day.max_tokens)
