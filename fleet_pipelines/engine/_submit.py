"""Submit a run of a job of the code location ``workspace.yaml`` loads, and follow it.

A submitted run carries the location's origin (``remote_job_origin`` / ``job_code_origin``), so
the Dagster UI can re-execute it and the Jobs overview lists it. It goes through the instance's
run coordinator (``QueuedRunCoordinator`` in every ``dagster.yaml`` fleet writes: limits per
campaign and the ``agent_sandbox`` pool) and run launcher (the default launcher on one machine;
dagster-celery / dagster-k8s in a deployment), never into the calling process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagster import AssetKey, DagsterEvent, DagsterInstance, DagsterRun, DagsterRunStatus

from assets._dagster_private import (
    AUTO_RETRY_RUN_ID_TAG,
    RUN_FAILURE_REASON_TAG,
    WILL_RETRY_TAG,
    CodeLocation,
    JobSubsetSelector,
    WorkspaceFileTarget,
    WorkspaceProcessContext,
    WorkspaceRequestContext,
    merge_dicts,
)
from fleet.errors import FleetError
from fleet_pipelines.engine._config import execution_config

__all__ = [
    "FINISHED",
    "IN_PROCESS",
    "PENDING",
    "WORKSPACE",
    "Say",
    "SubmitFailed",
    "SubmittedRun",
    "follow",
    "open_workspace",
    "retried",
    "submit",
    "workspace_file",
]

Say = Callable[[str], None]
FINISHED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}
WORKSPACE = Path(__file__).resolve().parents[2] / "workspace.yaml"
WORKSPACE_ENV = "FLEET_WORKSPACE"
# The steps of a run in its run worker's process, one after the other, as in process: Dagster's
# default executor would start a process per step (seconds each), and the units of a batch
# already run concurrently inside their step. A run config naming `execution` replaces it.
IN_PROCESS: dict[str, Any] = {"execution": {"config": {"in_process": {}}}}


class SubmitFailed(FleetError):
    """The instance refused a run: the job is not in the code location, or the location does
    not load (the message names which)."""


@dataclass
class SubmittedRun:
    """A finished submitted run, read back from the instance: the same ``success`` and
    ``all_events`` an in-process result has, so callers judge both alike."""

    run_id: str
    job: str
    status: DagsterRunStatus
    all_events: list[DagsterEvent] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)  # run ids: the first, then its retries

    @property
    def success(self) -> bool:
        return self.status == DagsterRunStatus.SUCCESS


def workspace_file(workspace: Path | None = None) -> Path:
    """The workspace fleet submits through: ``workspace`` when given, else ``$FLEET_WORKSPACE``
    (a deployment's, naming its code server, the one its daemon and webserver load:
    deploy/workspace.yaml), else the project's ``workspace.yaml`` (its module, loaded by a code
    server of fleet's own). SubmitFailed, naming it, when there is no such file."""
    named = os.environ.get(WORKSPACE_ENV)
    if workspace is None:
        workspace = Path(named) if named else WORKSPACE
    if not workspace.is_file():
        shown = f"{WORKSPACE_ENV}={workspace}" if named and workspace == Path(named) else workspace
        raise SubmitFailed(f"{shown}: no such workspace file")
    return workspace


def open_workspace(instance: DagsterInstance,
                   workspace: Path | None = None) -> WorkspaceProcessContext:
    """The workspace of ``workspace`` (:func:`workspace_file` unless given) on ``instance``:
    its code location served by a gRPC code server process (the same origin the webserver and
    the daemon load)."""
    import dagster

    from fleet_pipelines._dagster_entry import route_grpc_children

    workspace = workspace_file(workspace)
    route_grpc_children()  # a python_module location's server: started as fleet's own are
    return WorkspaceProcessContext(
        instance=instance, version=dagster.__version__, read_only=False,
        workspace_load_target=WorkspaceFileTarget(paths=[str(workspace)]))


def _location(context: WorkspaceRequestContext) -> CodeLocation:
    names = list(context.code_location_names)
    if len(names) != 1:
        raise SubmitFailed(f"the workspace has {len(names)} code locations, expected one")
    errors = context.get_code_location_error(names[0])
    if errors is not None:
        raise SubmitFailed(f"code location {names[0]} does not load: "
                           f"{errors.message.strip().splitlines()[-1]}")
    return context.get_code_location(names[0])


def submit(process: WorkspaceProcessContext, job: str, tags: Mapping[str, str] | None = None,
           selection: Sequence[AssetKey] | None = None,
           run_config: Mapping[str, Any] | None = None) -> str:
    """Create a run of ``job`` (limited to the assets ``selection`` when given) with the code
    location's origin and submit it to the instance's run coordinator. Returns its run id.
    Its steps run in the run worker's process (``IN_PROCESS``), or on the deployment's celery
    workers for a batch or an integration (``execution_config``), unless ``run_config`` says
    otherwise.

    A selection naming assets the loaded location does not have yet (code module assets of a
    new index) reloads the location once first."""
    context = process.create_request_context()
    location = _location(context)
    if selection and not _has_assets(location, selection):
        process.reload_code_location(location.name)
        context = process.create_request_context()
        location = _location(context)
    (repo,) = location.get_repositories().values()
    if not repo.has_job(job):
        raise SubmitFailed(f"job {job} is not in code location {location.name}")
    selector = JobSubsetSelector(location_name=location.name, repository_name=repo.name,
                                 job_name=job, op_selection=None,
                                 asset_selection=list(selection) if selection else None)
    remote_job = location.get_job(selector)
    config = {**execution_config(job), **dict(run_config or {})}
    plan = location.get_execution_plan(remote_job, config, step_keys_to_execute=None,
                                       known_state=None, instance=process.instance)
    run = process.instance.create_run(
        job_name=job, run_id=None, run_config=config,
        resolved_op_selection=remote_job.resolved_op_selection, op_selection=None,
        step_keys_to_execute=plan.execution_plan_snapshot.step_keys_to_execute,
        status=None, root_run_id=None, parent_run_id=None,
        tags=merge_dicts(remote_job.tags, dict(tags or {})),
        job_snapshot=remote_job.job_snapshot,
        execution_plan_snapshot=plan.execution_plan_snapshot,
        parent_job_snapshot=remote_job.parent_job_snapshot,
        remote_job_origin=remote_job.get_remote_origin(),
        job_code_origin=remote_job.get_python_origin(),
        asset_selection=frozenset(selection) if selection else None,
        asset_check_selection=None, asset_graph=repo.asset_graph)
    process.instance.submit_run(run.run_id, context)
    return run.run_id


def _has_assets(location: CodeLocation, keys: Sequence[AssetKey]) -> bool:
    (repo,) = location.get_repositories().values()
    known = set(repo.asset_graph.get_all_asset_keys())
    return all(k in known for k in keys)


# The daemon's event log consumer looks for failed runs to retry every 5 s; a retry not made
# this long after the failure was missed (see assets._dagster_private.retry_failed_run).
MISSED_S = 30.0


def follow(instance: DagsterInstance, run_id: str, say: Say | None = None,
           poll_s: float = 0.5, on_wait: Callable[[DagsterRunStatus], None] | None = None,
           timeout_s: float | None = None,
           retry: Callable[[DagsterRun], None] | None = None,
           missed_s: float = MISSED_S) -> SubmittedRun:
    """Follow run ``run_id`` to its end: one ``say`` line per status change and per failed
    step; ``on_wait(status)`` between polls (e.g. to start a daemon for a run
    still queued). A run that failed where no step did and that the instance retries
    (``run_retries``: its start timed out, its run worker died) is followed into its retry,
    and so on to the last attempt; a retry the daemon has not made ``missed_s`` after the
    failure is made by ``retry(run)`` (as the daemon would). Returns the last attempt,
    finished, with all its Dagster events and the ids of every attempt."""
    attempts = [run_id]
    while True:
        run, events, messages = _follow_one(instance, run_id, say, poll_s, on_wait, timeout_s)
        again = _retry_of(instance, run, say, poll_s, on_wait, retry, missed_s)
        if again is None:
            return SubmittedRun(run_id, run.job_name, run.status, events, messages, attempts)
        run_id = again
        attempts.append(again)


def _follow_one(instance: DagsterInstance, run_id: str, say: Say | None, poll_s: float,
                on_wait: Callable[[DagsterRunStatus], None] | None,
                timeout_s: float | None) -> tuple[DagsterRun, list[DagsterEvent], list[str]]:
    run = instance.get_run_by_id(run_id)
    if run is None:
        raise SubmitFailed(f"run {run_id} does not exist on the instance")
    short = run_id[:8]
    events: list[DagsterEvent] = []
    messages: list[str] = []
    cursor: str | None = None
    status: DagsterRunStatus | None = None
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        page = instance.get_records_for_run(run_id, cursor=cursor)
        cursor = page.cursor
        for record in page.records:
            entry = record.event_log_entry
            event = entry.dagster_event
            if event is None:
                continue
            events.append(event)
            if event.is_step_failure and event.step_failure_data.error is not None:
                error = event.step_failure_data.error
                while error.cause is not None:  # the user code's error, not Dagster's wrapper
                    error = error.cause
                messages.append(f"{event.step_key}: {error.message.strip()}")
            elif event.is_run_failure:
                messages.append(entry.message or event.message or "")
            if event.is_step_failure and say is not None:
                    say(f"{run.job_name} run {short}: step {event.step_key} failed")
        run = instance.get_run_by_id(run_id)
        assert run is not None
        if run.status != status:
            status = run.status
            if say is not None:
                say(f"{run.job_name} run {short}: {status.value.lower()}")
        if run.status in FINISHED and not page.has_more:
            return run, events, messages
        if deadline is not None and time.monotonic() > deadline:
            raise SubmitFailed(f"run {run_id} of {run.job_name} still {run.status.value} "
                               f"after {timeout_s:.0f} s")
        if not page.has_more:
            if on_wait is not None:
                on_wait(run.status)
            time.sleep(poll_s)


class _Pending:
    def __repr__(self) -> str:
        return "PENDING"


PENDING: Any = _Pending()  # retried(): the instance will retry the run, its retry not yet made


def retried(instance: DagsterInstance, run: DagsterRun, tag_wait_s: float = 10.0) -> Any:
    """The id of the run the instance's daemon launched to retry the finished ``run``;
    :data:`PENDING` while that retry is still to come; None when the run is not retried (it did
    not fail, retries are off, or it failed in a step: ``retry_on_asset_or_op_failure: false``).

    Dagster tags a failed run with its decision (``dagster/will_retry``) just after the failure
    event (waited for ``tag_wait_s`` after the run ended), and the daemon tags it with its retry
    (``dagster/auto_retry_run_id``) when it creates it."""
    if run.status != DagsterRunStatus.FAILURE or not instance.run_retries_enabled:
        return None
    will = run.tags.get(WILL_RETRY_TAG)
    if will == "true":
        return run.tags.get(AUTO_RETRY_RUN_ID_TAG) or PENDING
    if will is None:
        record = instance.get_run_record_by_id(run.run_id)
        ended = record.end_time if record is not None else None
        if ended is not None and time.time() - ended < tag_wait_s:
            return PENDING
    return None


def _retry_of(instance: DagsterInstance, run: DagsterRun, say: Say | None, poll_s: float,
              on_wait: Callable[[DagsterRunStatus], None] | None,
              make_retry: Callable[[DagsterRun], None] | None = None,
              missed_s: float = MISSED_S, retry_wait_s: float = 300.0) -> str | None:
    """:func:`retried`, waited for: the retry's run id, or None (also when no retry was made
    ``retry_wait_s`` after the run failed; ``on_wait`` keeps a daemon running meanwhile).
    A retry Dagster decided on (``dagster/will_retry``) but the daemon has not made
    ``missed_s`` after the failure is made by ``make_retry(run)``, once."""
    start = time.monotonic()
    made = False
    while True:
        retry = retried(instance, run)
        if retry is None:
            return None
        if retry is not PENDING:
            if say is not None:
                why = run.tags.get(RUN_FAILURE_REASON_TAG, "unknown").lower().replace("_", " ")
                say(f"{run.job_name} run {run.run_id[:8]} failed ({why}): "
                    f"Dagster retries it as run {str(retry)[:8]}")
            return str(retry)
        if time.monotonic() - start > retry_wait_s:
            if say is not None:
                say(f"{run.job_name} run {run.run_id[:8]}: no retry after {retry_wait_s:.0f} s "
                    "(is the Dagster daemon running?)")
            return None
        if make_retry is not None and not made and run.tags.get(WILL_RETRY_TAG) == "true" and \
                time.monotonic() - start > missed_s:
            made = True
            if say is not None:
                say(f"{run.job_name} run {run.run_id[:8]}: the Dagster daemon has not retried "
                    f"it {missed_s:.0f} s after it failed (its event log consumer missed the "
                    "failure): retrying it as the daemon does")
            try:
                make_retry(run)
            except Exception as exc:  # (e.g. its code location gone): the wait goes on
                if say is not None:
                    say(f"{run.job_name} run {run.run_id[:8]}: retrying it failed: {exc}")
            fresh = instance.get_run_by_id(run.run_id)
            if fresh is None:
                return None
            run = fresh
            continue
        if on_wait is not None:
            on_wait(DagsterRunStatus.QUEUED)  # the retry comes from a daemon: one must run
        time.sleep(poll_s)
        fresh = instance.get_run_by_id(run.run_id)
        if fresh is None:
            return None
        run = fresh
