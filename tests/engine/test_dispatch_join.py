"""``SubmittingJobLauncher.join()`` returns only once every finished run's outcome is recorded:
CI met a dispatch test (at load ~15) whose ``join()`` returned while the watcher thread had taken
the run off its list but not yet written ``job.finished``."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from dagster import DagsterInstance, DagsterRun, DagsterRunStatus

from fleet_pipelines.engine.launcher import SubmittingJobLauncher
from fleet_pipelines.jobs import JobOutcome


class _Engine:
    """What the launcher's watcher reads of an engine: a real (ephemeral) instance; no daemon
    is needed for runs that have already ended."""

    missed_s = 30.0

    def __init__(self, instance: DagsterInstance) -> None:
        self.instance = instance
        self.daemon_asked = 0

    def ensure_daemon(self, status: Any = None) -> None:
        self.daemon_asked += 1


def test_join_waits_for_the_outcome_to_be_recorded() -> None:
    recorded: list[JobOutcome] = []
    recording = threading.Event()

    def slow_recorder(outcome: JobOutcome) -> None:  # a ledger write on a slow machine
        recording.set()
        time.sleep(1.0)
        recorded.append(outcome)

    with DagsterInstance.ephemeral() as instance:
        run_id = str(uuid.uuid4())
        instance.add_run(DagsterRun(job_name="plan_x_job", run_id=run_id,
                                    status=DagsterRunStatus.SUCCESS))
        launcher = SubmittingJobLauncher(_Engine(instance), [], slow_recorder,  # type: ignore[arg-type]
                                         poll_s=0.05)
        try:
            launcher.watch(run_id, "job-1")
            assert launcher.join(timeout=30)
            assert recording.is_set()
            assert recorded == [JobOutcome("job-1", run_id, "succeeded")]
        finally:
            launcher.close()
