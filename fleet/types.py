"""Value types that cross the seams between stages.

Every type here is plain data (frozen dataclasses where possible) so it can be stored in the
ledger, put in Dagster metadata, and sent over the coordinator API as JSON.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "JOB_DISPATCHED",
    "JOB_FINISHED",
    "JOB_STARTED",
    "AcquireResult",
    "Acquired",
    "AgentOutcome",
    "AgentStep",
    "Budget",
    "ChangeRef",
    "Cost",
    "Finding",
    "Grant",
    "IssueRef",
    "LeaseMode",
    "LeaseRequest",
    "LedgerEvent",
    "Refused",
    "StopReason",
    "SymbolId",
    "Task",
    "Verdict",
    "VerdictStatus",
    "WorkUnit",
    "Workspace",
]

SymbolId = str
"""``path::Qualified.name``; the module-level code of a file is ``path::<module>``."""

LeaseMode = Literal["read", "write"]


@dataclass(frozen=True)
class Finding:
    """One place a campaign rule matched.

    ``fingerprint`` = hash(rule, symbol, normalized syntax of the matched node): unchanged by
    moving code, reformatting or unrelated edits; changed by a real edit of the matched code.
    """

    fingerprint: str
    campaign: str
    rule: str
    symbol: SymbolId
    path: str
    line: int
    col: int
    start_byte: int
    end_byte: int
    snippet: str
    message: str


@dataclass(frozen=True)
class LeaseRequest:
    """One lease a unit needs; a unit acquires its requests sorted by ``(rank, symbol)``."""

    symbol: SymbolId
    mode: LeaseMode
    rank: int = 0


@dataclass(frozen=True)
class Grant:
    """A lease that is held: ``token`` is the fencing token, monotonic per symbol."""

    lease_id: str
    symbol: SymbolId
    mode: LeaseMode
    holder: str
    token: int
    expires_at: float


@dataclass(frozen=True)
class Acquired:
    grants: tuple[Grant, ...]


@dataclass(frozen=True)
class Refused:
    """Not acquired: ``blocking`` names the symbols held by others (and by whom) when known."""

    reason: str
    blocking: tuple[tuple[SymbolId, str], ...] = ()


AcquireResult = Acquired | Refused


@dataclass(frozen=True)
class WorkUnit:
    """The unit of work one agent does under one lease set.

    ``key`` is a stable hash of the unit's content (campaign, write set, finding fingerprints,
    base commit); it is the Dagster dynamic partition key. ``repository`` is the store key of
    the repository the unit belongs to (``fleet.home.store_key``; ``""``: none named): only a
    store scoped to that repository loads, leases, runs and records it (``fleet.unit``,
    ``fleet.store.repo_scope``). The key leaves it out: a fork and its upstream at one commit
    plan units of the same keys, which the store keeps apart by repository.
    """

    key: str
    campaign: str
    base_commit: str
    write_set: tuple[SymbolId, ...]
    read_set: tuple[SymbolId, ...]
    findings: tuple[Finding, ...]
    rank: int = 0
    wave: int = 0
    repository: str = ""

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(sorted({s.split("::", 1)[0] for s in self.write_set}))


@dataclass(frozen=True)
class Workspace:
    """One unit's git worktree on branch ``fleet/<campaign>/<unit>`` plus a scratch dir."""

    path: Path
    branch: str
    base_commit: str
    scratch: Path
    repo: Path


@dataclass(frozen=True)
class Budget:
    """Limits for one task; ``None`` means unlimited."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_wall_s: float | None = None
    max_tool_calls: int | None = None


@dataclass(frozen=True)
class Cost:
    """Tokens and dollars; ``cache_saved_usd`` is what prompt caching saved against sending the
    same input uncached (cache reads at a tenth of the price, less the premium of cache writes)."""

    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    cache_saved_usd: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.usd + other.usd,
            self.cache_saved_usd + other.cache_saved_usd,
        )

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class StopReason(enum.StrEnum):
    FINISHED = "finished"
    NOTHING_TO_DO = "nothing_to_do"
    BUDGET_TOKENS = "budget_tokens"
    BUDGET_COST = "budget_cost"
    BUDGET_WALL = "budget_wall"
    BUDGET_TOOL_CALLS = "budget_tool_calls"
    BUDGET_DAY = "budget_day"
    KILLED = "killed"
    FORMAT_ERRORS = "format_errors"
    REFUSED = "refused"
    ERROR = "error"


@dataclass(frozen=True)
class AgentStep:
    """One step of an agent: a tool call or a codemod application, with what it returned."""

    index: int
    action: str
    arguments: dict[str, Any]
    result: str
    ok: bool = True


@dataclass(frozen=True)
class AgentOutcome:
    """What an agent produced: ``patch`` is a unified diff against the unit's base commit."""

    patch: str
    steps: tuple[AgentStep, ...]
    cost: Cost
    stop_reason: StopReason
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.stop_reason is StopReason.FINISHED and bool(self.patch)


VerdictStatus = Literal["accept", "reject", "unknown"]

# Ledger kinds of a dispatched job (``unit`` = the job id), written by the coordinator API and by
# the launcher of its Dagster run: here, so the pipeline need not import the web stack.
JOB_DISPATCHED = "job.dispatched"
JOB_STARTED = "job.started"  # a free-form task's agent started (``fleet.unit.TaskLauncher``)
JOB_FINISHED = "job.finished"  # {"status": "succeeded" | "failed" | "canceled", "error": ...}


@dataclass(frozen=True)
class Verdict:
    """A gate's judgement of one patch. ``unknown`` = could not judge (treated as reject)."""

    gate: str
    status: VerdictStatus
    evidence: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "accept"


@dataclass(frozen=True)
class LedgerEvent:
    seq: int
    kind: str
    unit: str | None
    campaign: str | None
    actor: str
    payload: dict[str, Any]
    created_at: float
    prev_hash: str
    hash: str
    repo: str = ""
    """The repository (store key, ``fleet.home.repository_key``) the event belongs to: a work
    unit's ``unit.planned`` event names its unit's; ``""`` for an event of no repository."""


@dataclass(frozen=True)
class Task:
    task_id: str
    kind: str
    key: str
    payload: dict[str, Any]
    attempts: int
    claimed_by: str | None = None


@dataclass(frozen=True)
class ChangeRef:
    """A change handed over by a forge: a branch, and a pull request where the forge has them."""

    forge: str
    branch: str
    number: int | None
    url: str
    state: str = "open"


@dataclass(frozen=True)
class IssueRef:
    forge: str
    number: int
    url: str
    created: bool
