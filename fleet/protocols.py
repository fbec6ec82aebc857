"""The protocols at the seams between stages, in one place.

Implementations are named technology + role (``SqliteLeaseStore``, ``PostgresLeaseStore``,
``CodemodAgent``, ``ClaudeAgent``, ``LocalGitForge``, ``GitHubForge``). The ``Sandbox`` protocol
lives in the top-level :mod:`sandbox` package, which imports nothing of ours; what the Dagster
assets need from their resources (``StoreSource``, ``AgentSource``...) is in ``assets/_seams.py``,
the layer that knows resources.

Expected outcomes are values (``Acquired | Refused``, ``Verdict``); the methods raise only
:class:`fleet.errors.FleetError` subclasses, for faults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from fleet.types import (
    AcquireResult,
    AgentOutcome,
    AgentStep,
    Budget,
    ChangeRef,
    Finding,
    IssueRef,
    LeaseRequest,
    LedgerEvent,
    Task,
    Verdict,
    Workspace,
    WorkUnit,
)

if TYPE_CHECKING:
    from fleet.verify.reviewer import ReviewInput
    from sandbox import Sandbox

__all__ = [
    "DEFAULT_LEASE_TTL_S",
    "Agent",
    "Controls",
    "Forge",
    "Gates",
    "LeaseStore",
    "Ledger",
    "Memory",
    "Model",
    "Reviewer",
    "StepCallback",
    "TaskQueue",
    "Workspaces",
]

DEFAULT_LEASE_TTL_S = 60.0
"""A unit's leases outlive their holder's last heartbeat (renewed every third of it) by this
much: how soon a dead worker's units are free again (a deployment's ``FLEET_LEASE_TTL_S``)."""


@runtime_checkable
class LeaseStore(Protocol):
    """Hierarchical symbol leases with fencing tokens.

    A write lease on ``a.py::Foo`` conflicts with any lease on ``a.py::Foo`` or inside it
    (``a.py::Foo.bar``) and vice versa; read leases share with read leases. Two classes of one
    file can be written at once. Raises ``StoreError`` on infrastructure faults only.
    """

    def try_acquire(
        self, holder: str, unit: str, requests: Sequence[LeaseRequest], ttl_s: float
    ) -> AcquireResult:
        """All-or-nothing, non-blocking."""
        ...

    def acquire_all(
        self,
        holder: str,
        unit: str,
        requests: Sequence[LeaseRequest],
        ttl_s: float,
        deadline_s: float = 45.0,
    ) -> AcquireResult:
        """In ``(rank, symbol)`` order, all-or-nothing, within the deadline; on deadline it
        releases everything it took and returns ``Refused`` (the caller backs off and requeues)."""
        ...

    def renew(self, holder: str, ttl_s: float) -> int:
        """Heartbeat: extend every live lease of ``holder``; returns how many were renewed."""
        ...

    def release(self, holder: str, lease_ids: Iterable[str] | None = None) -> int:
        """Release the given leases of ``holder`` (all of them when ``None``)."""
        ...

    def check_fence(self, symbol: str, token: int) -> bool:
        """True when ``token`` is still the current fencing token of ``symbol``."""
        ...


@runtime_checkable
class TaskQueue(Protocol):
    def enqueue(self, kind: str, key: str, payload: dict[str, Any]) -> str:
        """Idempotent per ``(kind, key)`` while the task is not done; returns the task id."""
        ...

    def claim(self, worker: str, kinds: Sequence[str] | None = None, limit: int = 1) -> list[Task]:
        ...

    def complete(self, task_id: str, result: dict[str, Any] | None = None) -> None: ...

    def fail(self, task_id: str, error: str, retry: bool = True) -> None: ...

    def heartbeat(self, worker: str) -> None: ...

    def requeue_stale(self, older_than_s: float) -> int: ...


@runtime_checkable
class Ledger(Protocol):
    """Append-only, hash-chained events. UPDATE and DELETE are refused by the database."""

    def append(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        unit: str | None = None,
        campaign: str | None = None,
        actor: str = "fleet",
    ) -> LedgerEvent: ...

    def events(
        self,
        *,
        unit: str | None = None,
        campaign: str | None = None,
        kind: str | None = None,
        since: float | None = None,
        until: float | None = None,
        repo: str | None = None,
    ) -> list[LedgerEvent]:
        """Events oldest first, narrowed by each filter given; ``repo``: that repository's
        events (``LedgerEvent.repo``) and those of no repository."""
        ...

    def verify(self) -> list[str]:
        """Every break in the chain, described; empty when the ledger verifies."""
        ...


StepCallback = Callable[[AgentStep, str], None]
"""Called after each agent step with the step and the worktree's whole diff against the unit's
base commit at that point (``fleet.agents.rollback.step_recorder`` makes it a ledger event)."""


@runtime_checkable
class Agent(Protocol):
    """Fixes one unit in its workspace. Every command it runs goes through ``sandbox``.

    ``CodemodAgent`` (a libcst codemod), ``CommandAgent`` (a command-line fixer) and
    ``ClaudeAgent`` (a Messages API tool loop) implement it. After each step it calls
    ``on_step(step, diff)`` when given (the unit runner records replayable steps that way).
    Never raises for an agent-level failure: those are an ``AgentOutcome`` with a stop reason.
    A failed agent leaves the repository untouched (it only ever writes in ``workspace``).
    """

    name: str

    def run(
        self,
        unit: WorkUnit,
        workspace: Workspace,
        sandbox: Sandbox,
        budget: Budget,
        on_step: StepCallback | None = None,
    ) -> AgentOutcome: ...


@runtime_checkable
class Workspaces(Protocol):
    """Creates and removes unit worktrees (``fleet.unit.GitWorkspaces`` over
    ``fleet.forge.worktree``)."""

    def create(self, unit: WorkUnit) -> Workspace:
        """A fresh worktree on branch ``fleet/<campaign>/<unit>`` at ``unit.base_commit``."""
        ...

    def remove(self, workspace: Workspace, keep_branch: bool) -> None:
        """Remove the worktree and scratch dir; delete the branch unless ``keep_branch``."""
        ...


@runtime_checkable
class Gates(Protocol):
    """Runs the gates of the unit's campaign on the agent's patch; one verdict per gate
    (``fleet.unit.VerifyGates`` over ``fleet.verify.run_gates``)."""

    def __call__(
        self, unit: WorkUnit, workspace: Workspace, outcome: AgentOutcome, sandbox: Sandbox
    ) -> list[Verdict]: ...


@runtime_checkable
class Model(Protocol):
    """A chat model with tool use, shaped like the Anthropic Messages API.

    ``complete`` returns a dict shaped like a Messages API response: ``content`` (a list of
    ``{"type": "text"|"tool_use", ...}`` blocks), ``stop_reason`` and ``usage``
    (``input_tokens``, ``output_tokens``). ``name`` is only read (an attribute or a property).
    """

    @property
    def name(self) -> str: ...

    def complete(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int,
    ) -> dict[str, Any]: ...


@runtime_checkable
class Forge(Protocol):
    """Where a result is handed over: a branch and a change (pull request), and filed issues."""

    name: str

    def publish(
        self, repo_path: str, branch: str, title: str, body: str, labels: Sequence[str] = ()
    ) -> ChangeRef:
        """Push ``branch`` (already committed in ``repo_path``) and open or update its change."""
        ...

    def status(self, ref: ChangeRef) -> str:
        """``open`` | ``merged`` | ``closed`` (and for PRs, the checks' state when known)."""
        ...

    def file_issue(self, finding: Finding, title: str, body: str) -> IssueRef:
        """File ``finding`` once: a second call for the same fingerprint returns the first."""
        ...


@runtime_checkable
class Controls(Protocol):
    """The kill switch and budgets (``fleet.store.SqlControls``). A switch engaged by any process
    is seen by every other at its next check; ``spend`` is atomic spend-or-refuse."""

    def engage(self, reason: str) -> None: ...

    def release(self) -> None: ...

    def engaged(self) -> bool: ...

    def spend(
        self,
        scope: str,
        amount_usd: float,
        tokens: int,
        limit_usd: float | None,
        limit_tokens: int | None,
    ) -> bool:
        """Add the spend to ``scope`` (``task:<id>``, ``day:YYYY-MM-DD``) if it stays within both
        limits (``None`` = unlimited) and return True; otherwise spend nothing, return False."""
        ...


@runtime_checkable
class Memory(Protocol):
    """Project memory notes that persist across units and sweeps (``fleet.store.SqlMemory``)."""

    def add(self, text: str, *, tag: str = "note", author: str = "") -> Any: ...

    def list(self, tag: str | None = None) -> list[Any]: ...

    def remove(self, note_id: int) -> bool: ...


class Reviewer(Protocol):
    """The review gate's judge (``fleet.verify.OfflineReviewer``, ``ClaudeReviewer``): one
    verdict per lens, gate names ``review:<lens>``; unsure is ``reject``. ``name`` is recorded
    with the unit's review verdict. Raises only ``FleetError`` (a model fault)."""

    name: str

    def review(self, item: ReviewInput) -> list[Verdict]:
        """One verdict per lens, gate names ``review:<lens>``."""
        ...
