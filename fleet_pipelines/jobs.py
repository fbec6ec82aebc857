"""Jobs, named ``<verb>_<noun>_job``: index the code, and per campaign plan / fix / integrate.

``fix_<c>_job`` runs the partitioned ``candidate_patches`` + ``verified_patches`` of a batch of
units (a partition range); the other jobs are unpartitioned. ``DagsterJobLauncher`` turns a
``/v1/jobs/dispatch`` of the coordinator API into a real run.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dagster import (
    AssetsDefinition,
    AssetSelection,
    DagsterInstance,
    DagsterRunStatus,
    Definitions,
    define_asset_job,
)

from assets import SYMBOL_GRAPH, TARGET_FILES_TAG, CampaignAssets
from assets._dagster_private import MAX_RETRIES_TAG, UnresolvedAssetJobDefinition
from fleet.types import JOB_FINISHED
from fleet_pipelines.engine.executor import fleet_executor

__all__ = [
    "IN_PROCESS_TAGS",
    "JOB_ID_TAG",
    "DagsterJobLauncher",
    "JobOutcome",
    "build_jobs",
    "fix_job_name",
    "index_job_name",
    "integrate_job_name",
    "ledger_recorder",
    "plan_job_name",
    "report_outcome",
    "run_outcome",
]


def index_job_name() -> str:
    return "index_code_job"


def plan_job_name(c: CampaignAssets) -> str:
    return f"plan_{c.prefix}_job"


def fix_job_name(c: CampaignAssets) -> str:
    return f"fix_{c.prefix}_job"


def integrate_job_name(c: CampaignAssets) -> str:
    return f"integrate_{c.prefix}_job"


def build_jobs(campaigns: Sequence[CampaignAssets], code: Sequence[AssetsDefinition]
               ) -> list[UnresolvedAssetJobDefinition]:
    code_keys = [k for a in code for k in a.keys]
    jobs = [define_asset_job(index_job_name(), AssetSelection.assets(SYMBOL_GRAPH, *code_keys),
                             description="Index the repository and refresh the code assets.")]
    for c in campaigns:
        tags = {"fleet/campaign": c.campaign}
        # The plan job re-indexes (a self-merging campaign may have moved the base); the code
        # module assets come along so that they record the graph they were built from: an
        # unchanged graph keeps its data version, and nothing downstream turns "Unsynced".
        jobs.append(define_asset_job(
            plan_job_name(c),
            AssetSelection.assets(SYMBOL_GRAPH, *code_keys, c.key("findings"), c.key("work_units")),
            tags=tags, description=f"Index, then find and plan the units of {c.campaign}."))
        jobs.append(define_asset_job(
            fix_job_name(c),
            AssetSelection.assets(c.key("candidate_patches"), c.key("verified_patches")),
            tags=tags, executor_def=fleet_executor,
            description=f"Run a batch of {c.campaign} units: agents, gates, verified patches."))
        jobs.append(define_asset_job(
            integrate_job_name(c),
            AssetSelection.assets(c.key("integration"), c.key("pull_requests")),
            tags=tags, executor_def=fleet_executor,
            description=f"Integrate the verified {c.campaign} patches and hand over."))
    return jobs


JOB_ID_TAG = "fleet/job_id"
# The tags of a run executed in process (``fleet sweep --in-process``, the in-process dispatch):
# the instance's run_retries never retry it (a retry needs the code location's origin, which such
# a run has not; Dagster would only log that it could not).
IN_PROCESS_TAGS = {MAX_RETRIES_TAG: "0"}


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobOutcome:
    """How the run of a dispatched job ended: ``status`` is ``succeeded | failed | canceled``;
    ``error`` is the first line of the failure (a failed step's error, else the run's)."""

    job_id: str
    run_id: str
    status: str
    error: str | None = None


_RUN_STATUS = {DagsterRunStatus.SUCCESS: "succeeded", DagsterRunStatus.CANCELED: "canceled"}


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), text.strip())


def run_outcome(instance: DagsterInstance, job_id: str, run_id: str) -> JobOutcome:
    """The outcome of the finished run ``run_id`` on ``instance``: its status, and for a failed
    run ``<step>: <first line of its root error>`` of the first failed step (the run
    failure's message when no step failed, e.g. a resource that would not start)."""
    run = instance.get_run_by_id(run_id)
    if run is None:
        return JobOutcome(job_id, run_id, "failed", f"run {run_id} was never created")
    status = _RUN_STATUS.get(run.status, "failed")
    if status != "failed":
        return JobOutcome(job_id, run_id, status)
    messages: list[str] = []
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event is None:
            continue
        if event.is_step_failure and event.step_failure_data.error is not None:
            error = event.step_failure_data.error
            while error.cause is not None:  # the user code's own error, not dagster's wrapper
                error = error.cause
            messages.insert(0, f"{event.step_key}: {_first_line(error.message)}")
        elif event.is_run_failure:
            messages.append(record.message or "")
    reason = next((_first_line(m) for m in messages if m.strip()), f"run ended {run.status.value}")
    return JobOutcome(job_id, run_id, "failed", reason)


def report_outcome(on_finish: Callable[[JobOutcome], None] | None, outcome: JobOutcome) -> None:
    """Hand a finished job's ``outcome`` to ``on_finish`` (a launcher's callback, if any); an
    exception it raises is logged, never lost silently, and never ends the launcher's thread."""
    if on_finish is None:
        return
    try:
        on_finish(outcome)
    except Exception:
        log.exception("recording the outcome of job %s failed", outcome.job_id)


def ledger_recorder(defs: Definitions) -> Callable[[JobOutcome], None] | None:
    """Records each :class:`JobOutcome` as a ``job.finished`` ledger event (``unit`` = the job
    id, beside its ``job.dispatched``) in the store of ``defs``' ``store`` resource; ``None``
    when ``defs`` has no fleet store."""
    from fleet_pipelines.resources import StoreResource

    resource = (defs.resources or {}).get("store")
    if not isinstance(resource, StoreResource):
        return None

    def record(outcome: JobOutcome) -> None:
        resource.ledger().append(JOB_FINISHED, {
            "job_id": outcome.job_id, "run_id": outcome.run_id, "status": outcome.status,
            "error": outcome.error}, unit=outcome.job_id, actor="dagster")

    return record


class DagsterJobLauncher:
    """The ``launcher`` of the coordinator API (``fleet.api.create_app(..., launcher=...)``):
    ``POST /v1/jobs/dispatch`` with ``task`` naming a campaign of these definitions becomes a real
    run of ``plan_<c>_job`` on ``instance``, limited to the dispatched ``target_files`` (the
    planner sensor then runs the units). The run executes in a background thread; the launcher
    returns its run id at once. A task that names no campaign is a free-form task, handed to
    ``tasks`` (``fleet.unit.TaskLauncher``: the LLM agent on one ad-hoc unit); without it, it is
    left queued (``None``).

    When the run ends (succeeded, failed, canceled, or could not even start), ``on_finish`` is
    called with its :class:`JobOutcome` in the run's thread (default: :func:`ledger_recorder`
    of the definitions' store); an exception it raises is logged, never lost silently."""

    def __init__(self, defs: Definitions, campaigns: Sequence[CampaignAssets],
                 instance: DagsterInstance,
                 on_finish: Callable[[JobOutcome], None] | None = None,
                 tasks: Callable[[str, Any], str | None] | None = None) -> None:
        self.defs = defs
        self.instance = instance
        self.campaigns = {c.campaign: c for c in campaigns}
        self.on_finish = on_finish if on_finish is not None else ledger_recorder(defs)
        self.threads: list[threading.Thread] = []
        self.tasks = tasks

    def __call__(self, job_id: str, body: Any) -> str | None:
        campaign = self.campaigns.get(str(body.task))
        if campaign is None:
            return self.tasks(job_id, body) if self.tasks is not None else None
        run_id = str(uuid.uuid4())
        job = self.defs.resolve_job_def(plan_job_name(campaign))
        tags = {JOB_ID_TAG: job_id, TARGET_FILES_TAG: ",".join(body.target_files),
                "fleet/campaign": campaign.campaign, **IN_PROCESS_TAGS}

        def execute() -> None:
            try:
                job.execute_in_process(instance=self.instance, run_id=run_id, tags=tags,
                                       raise_on_error=False)
                outcome = run_outcome(self.instance, job_id, run_id)
            except Exception as exc:  # the launch itself failed: the job failed, say why
                log.exception("launching the run of job %s failed", job_id)
                outcome = JobOutcome(job_id, run_id, "failed",
                                     _first_line(f"{type(exc).__name__}: {exc}"))
            self._finished(outcome)

        thread = threading.Thread(target=execute, name=f"dispatch-{job_id}", daemon=True)
        thread.start()
        self.threads.append(thread)
        return run_id

    def _finished(self, outcome: JobOutcome) -> None:
        report_outcome(self.on_finish, outcome)

    def join(self, timeout: float | None = None) -> None:
        """Wait for every run launched so far (and its ``on_finish``)."""
        for thread in self.threads:
            thread.join(timeout)
