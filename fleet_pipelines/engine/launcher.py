"""The coordinator API's launcher on Dagster's engine: ``POST /v1/jobs/dispatch`` of a campaign
becomes a *submitted* run of its plan job (with the code location's origin, through the run
queue), never a run executing in the API server.

One watcher thread follows the submitted runs' status on the instance and records each outcome
(``job.finished`` in the ledger, by default); it runs nothing itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from dagster import DagsterRunStatus

from assets import TARGET_FILES_TAG, CampaignAssets
from assets._dagster_private import WILL_RETRY_TAG
from fleet_pipelines.engine._session import Engine
from fleet_pipelines.engine._submit import FINISHED, PENDING, retried, submit
from fleet_pipelines.jobs import (
    JOB_ID_TAG,
    JobOutcome,
    plan_job_name,
    report_outcome,
    run_outcome,
)

__all__ = ["SubmittingJobLauncher", "submitting_launcher"]

log = logging.getLogger(__name__)


class SubmittingJobLauncher:
    """``launcher(job_id, body)`` for ``fleet.api.create_app``: a ``task`` naming one of
    ``campaigns`` submits ``plan_<c>_job`` limited to ``target_files`` and returns its run id;
    any other task is a free-form task handed to ``tasks`` (``fleet.unit.TaskLauncher``), or
    stays queued (``None``) without it. ``on_finish(JobOutcome)`` is called once per run when it
    ends (from the watcher thread; an exception it raises is logged)."""

    def __init__(self, engine: Engine, campaigns: Sequence[CampaignAssets],
                 on_finish: Callable[[JobOutcome], None] | None = None,
                 tasks: Callable[[str, Any], str | None] | None = None,
                 poll_s: float = 0.5, retry_wait_s: float = 300.0) -> None:
        self.engine = engine
        self.tasks = tasks
        self.campaigns = {c.campaign: c for c in campaigns}
        self.on_finish = on_finish
        self.poll_s = poll_s
        self._pending: dict[str, str] = {}  # run id -> job id
        self._retry_wait: dict[str, float] = {}  # failed run id -> since when its retry is due
        self._made: set[str] = set()  # failed runs whose missed retry this launcher made
        self.retry_wait_s = retry_wait_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="dispatch-watcher",
                                         daemon=True)
        self._watcher.start()
        engine.ensure_daemon()  # at once: a daemon takes seconds to start dequeuing

    def __call__(self, job_id: str, body: Any) -> str | None:
        campaign = self.campaigns.get(str(body.task))
        if campaign is None:
            return self.tasks(job_id, body) if self.tasks is not None else None
        tags = {JOB_ID_TAG: job_id, TARGET_FILES_TAG: ",".join(body.target_files),
                "fleet/campaign": campaign.campaign}
        with self._lock:  # one submission at a time through the workspace
            run_id = submit(self.engine.process, plan_job_name(campaign), tags)
            self._pending[run_id] = job_id
        return run_id

    def watch(self, run_id: str, job_id: str) -> None:
        """Follow run ``run_id`` (submitted before, e.g. by an API server that was restarted)
        as the run of ``job_id``: its outcome is recorded when it (or its last retry) ends."""
        with self._lock:
            self._pending[run_id] = job_id

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            with self._lock:
                pending = dict(self._pending)
            for run_id, job_id in pending.items():
                run = self.engine.instance.get_run_by_id(run_id)
                if run is not None and run.status == DagsterRunStatus.QUEUED:
                    self.engine.ensure_daemon(run.status)  # the one it started has exited
                if run is None or run.status not in FINISHED:
                    continue
                retry = retried(self.engine.instance, run)
                if retry is PENDING:  # a daemon retries it (or, after retry_wait_s, nothing)
                    since = self._retry_wait.setdefault(run_id, time.monotonic())
                    waited = time.monotonic() - since
                    if waited < self.retry_wait_s:
                        if waited > self.engine.missed_s and run_id not in self._made and \
                                run.tags.get(WILL_RETRY_TAG) == "true":
                            self._made.add(run_id)  # the daemon missed it: as in follow()
                            log.warning("run %s: no retry from the Dagster daemon %.0f s after "
                                        "it failed; retrying it as the daemon does", run_id,
                                        waited)
                            self._retry(run)
                        self.engine.ensure_daemon(DagsterRunStatus.QUEUED)
                        continue
                    log.warning("run %s was to be retried, but no retry came in %.0f s",
                                run_id, self.retry_wait_s)
                    retry = None
                self._retry_wait.pop(run_id, None)
                self._made.discard(run_id)
                try:
                    if retry is None:  # recorded before join() can see the run gone
                        self._finished(run_outcome(self.engine.instance, job_id, run_id))
                finally:
                    with self._lock:
                        self._pending.pop(run_id, None)
                        if retry is not None:  # the job's outcome is its retry's
                            self._pending[retry] = job_id

    def _retry(self, run: Any) -> None:
        try:
            with self._lock:  # one use of the workspace at a time
                self.engine.retry(run)
        except Exception:  # the watcher goes on; after retry_wait_s the run counts as failed
            log.exception("retrying run %s failed", run.run_id)

    def _finished(self, outcome: JobOutcome) -> None:
        report_outcome(self.on_finish, outcome)

    def join(self, timeout: float | None = None) -> bool:
        """Wait until every run submitted so far has ended and been recorded; False on
        timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                if not self._pending:
                    return True
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(self.poll_s)

    def close(self) -> None:
        self._stop.set()
        self._watcher.join(10)


class _Starting:
    """The launcher of ``fleet serve`` while its engine starts in the background (the code
    server and, when none serves the instance, a daemon take seconds; the API listens at once).
    A dispatch of a campaign waits for it; a free-form task does not."""

    def __init__(self, env: dict[str, str], campaigns: Sequence[CampaignAssets], instance: Any,
                 on_finish: Callable[[JobOutcome], None] | None,
                 tasks: Callable[[str, Any], str | None] | None, say: Callable[[str], None],
                 start_timeout_s: float = 600.0) -> None:
        self.names = {c.campaign for c in campaigns}
        self.tasks = tasks
        self.start_timeout_s = start_timeout_s
        self.launcher: SubmittingJobLauncher | None = None
        self.error: BaseException | None = None
        self._ready = threading.Event()
        self._stop = threading.Event()
        args = (env, campaigns, instance, on_finish, say)
        self._thread = threading.Thread(target=self._run, args=args, name="engine", daemon=True)
        self._thread.start()

    def _run(self, env: dict[str, str], campaigns: Sequence[CampaignAssets], instance: Any,
             on_finish: Callable[[JobOutcome], None] | None, say: Callable[[str], None]) -> None:
        from fleet_pipelines.engine._session import submitting

        try:  # this thread lives as long as the engine: the daemon it starts ends with it
            if callable(instance):  # creating (and migrating) the instance takes seconds too
                instance = instance()
            with submitting(instance, env, say) as engine:
                self.launcher = SubmittingJobLauncher(engine, campaigns, on_finish, self.tasks)
                self._ready.set()
                self._stop.wait()
                self.launcher.close()
        except BaseException as exc:  # reported to every dispatch that needs the engine
            log.exception("the Dagster engine of the coordinator did not start")
            self.error = exc
        finally:
            self._ready.set()

    def __call__(self, job_id: str, body: Any) -> str | None:
        if str(body.task) not in self.names:
            return self.tasks(job_id, body) if self.tasks is not None else None
        if not self._ready.wait(self.start_timeout_s) or self.launcher is None:
            from fleet_pipelines.engine._submit import SubmitFailed

            raise SubmitFailed(f"the Dagster engine did not start: {self.error or 'timed out'}")
        return self.launcher(job_id, body)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(60)


def submitting_launcher(env: dict[str, str], campaigns: Sequence[CampaignAssets],
                        instance: Any, on_finish: Callable[[JobOutcome], None] | None = None,
                        tasks: Callable[[str, Any], str | None] | None = None,
                        say: Callable[[str], None] | None = None) -> Callable[[str, Any],
                                                                              str | None]:
    """The launcher of ``fleet serve``: a :class:`SubmittingJobLauncher` whose engine starts in
    the background at once and closes (with the daemon it started) when the process exits.
    ``instance`` may be a function that opens it (called in the background as well)."""
    import atexit

    starting = _Starting(env, campaigns, instance, on_finish, tasks, say or log.warning)
    atexit.register(starting.close)
    return starting
