"""The life of one work unit: leases in rank order -> workspace -> agent in the sandbox ->
gates -> ledger events. Used by the ``candidate_patches`` asset (a batch of units, concurrently)
and by ``fleet fix`` (one unit) alike.

``run_unit(unit, env, worker) -> UnitResult`` and ``run_units(units, env, parallel, ...)`` run
units; ``UnitEnv`` wires the store's leases and ledger, the agent, the sandbox, the worktrees
(``Workspaces``) and the gates (``Gates``). Results and planned units are ledger events
(``record_planned``, ``load_units``, ``latest_results``, ``requeue``).
"""

from fleet.protocols import Gates, Workspaces
from fleet.unit._records import (
    TERMINAL,
    UNIT_FINISHED,
    UNIT_PLANNED,
    UNIT_REQUEUED,
    ForeignUnit,
    UnitResult,
    UnitStatus,
    check_own,
    expand_unit_key,
    judged_with,
    latest_results,
    ledger_repository,
    load_units,
    record_planned,
    record_result,
    redo,
    requeue,
    resolve_units,
    result_from_dict,
    result_to_dict,
    stamp_judged_with,
    unit_from_dict,
    unit_to_dict,
    untouched_findings,
)
from fleet.unit._run import (
    UnitEnv,
    commit_workspace,
    lease_requests,
    repo_untouched,
    run_unit,
    run_units,
)
from fleet.unit._span import (
    RepositoryReport,
    Span,
    load_span,
    render_span,
    repository_report,
)
from fleet.unit._task import (
    TaskLauncher,
    TaskRequest,
    close_clients,
    run_task,
    task_campaign,
    task_unit,
)
from fleet.unit._wiring import GitWorkspaces, VerifyGates, default_reviewer

__all__ = [
    "TERMINAL",
    "UNIT_FINISHED",
    "UNIT_PLANNED",
    "UNIT_REQUEUED",
    "ForeignUnit",
    "Gates",
    "GitWorkspaces",
    "RepositoryReport",
    "Span",
    "TaskLauncher",
    "TaskRequest",
    "UnitEnv",
    "UnitResult",
    "UnitStatus",
    "VerifyGates",
    "Workspaces",
    "check_own",
    "close_clients",
    "commit_workspace",
    "default_reviewer",
    "expand_unit_key",
    "judged_with",
    "latest_results",
    "lease_requests",
    "ledger_repository",
    "load_span",
    "load_units",
    "record_planned",
    "record_result",
    "redo",
    "render_span",
    "repo_untouched",
    "repository_report",
    "requeue",
    "resolve_units",
    "result_from_dict",
    "result_to_dict",
    "run_task",
    "run_unit",
    "run_units",
    "stamp_judged_with",
    "task_campaign",
    "task_unit",
    "unit_from_dict",
    "unit_to_dict",
    "untouched_findings",
]
