"""The run queue of every ``dagster.yaml`` fleet writes: a ``QueuedRunCoordinator``, limits per
campaign (the ``fleet/campaign`` tag every fleet job carries) and the ``agent_sandbox`` pool."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from fleet.errors import ConfigError

__all__ = [
    "CAMPAIGN_TAG",
    "DISTRIBUTED_JOBS",
    "EMBEDDED_EVENT_LOG",
    "EXECUTORS",
    "celery_settings",
    "ensure_run_queue",
    "execution_config",
    "run_queue_config",
]

CAMPAIGN_TAG = "fleet/campaign"
EMBEDDED_EVENT_LOG = "PooledSqliteEventLogStorage"  # fleet_pipelines.storage


def run_queue_config(agents: int = 2, runs_per_campaign: int = 4, max_runs: int = 8,
                     start_timeout_s: int = 180, max_retries: int = 2,
                     monitor_poll_s: int = 10) -> dict[str, Any]:
    """The ``run_coordinator``, ``concurrency``, ``code_servers``, ``run_monitoring`` and
    ``run_retries`` sections: at most
    ``max_runs`` runs in progress, ``runs_per_campaign`` of one campaign, ``agents`` steps of
    the ``agent_sandbox`` pool (every unpooled pool too) at once. The queue is read every
    second: a sweep waits for each run it submits. A sweep's own code server is waited for
    when the sweep closes its workspace (else its process outlives the ``Popen`` that started
    it).

    ``run_monitoring`` and ``run_retries`` (the daemon's): a run left ``STARTING`` (a daemon
    killed between dequeuing and launching it) fails after ``start_timeout_s`` (checked every
    ``monitor_poll_s``), and a run that failed where no step did (that, or its run worker died)
    is retried up to ``max_retries`` times; a failed step is never retried (a rejected patch is
    a verdict, not a fault). A sweep follows a run into its retries (engine/_submit.py
    ``follow``).

    ``run_launcher``: each run worker forked from a warm fork server instead of an interpreter
    spawned by the code server (fleet_pipelines/engine/run_launcher.py: ~1.8 CPU-s less per
    run here); a run it cannot fork goes to Dagster's default launcher."""
    return {
        "run_launcher": {"module": "fleet_pipelines.engine.run_launcher",
                         "class": "ForkingRunLauncher"},
        "code_servers": {"wait_for_local_processes_on_shutdown": True},
        "run_monitoring": {"enabled": True, "start_timeout_seconds": start_timeout_s,
                           "poll_interval_seconds": monitor_poll_s, "max_resume_run_attempts": 0},
        "run_retries": {"enabled": True, "max_retries": max_retries,
                        "retry_on_asset_or_op_failure": False},
        "run_coordinator": {
            "module": "dagster._core.run_coordinator",
            "class": "QueuedRunCoordinator",
            "config": {"dequeue_interval_seconds": 1},
        },
        "concurrency": {
            "runs": {
                "max_concurrent_runs": max_runs,
                "tag_concurrency_limits": [
                    {"key": CAMPAIGN_TAG, "value": {"applyLimitPerUniqueValue": True},
                     "limit": runs_per_campaign},
                ],
            },
            "pools": {"default_limit": agents, "granularity": "run"},
        },
    }


def ensure_run_queue(dagster_home: Path, agents: int = 2) -> bool:
    """Add :func:`run_queue_config` to the embedded default's ``dagster.yaml`` (the one whose
    event log is fleet's pooled SQLite storage): the queue sections unless it already configures
    a run coordinator, a run queue or concurrency, and ``run_monitoring`` / ``run_retries`` /
    ``run_launcher`` when absent (a file written before fleet set them gets them; a file that
    names its own launcher keeps it); a deployment's own file is never touched. True if
    written."""
    path = dagster_home / "dagster.yaml"
    if not path.is_file():
        return False
    loaded = yaml.safe_load(path.read_text())
    current = loaded if isinstance(loaded, dict) else {}
    storage = current.get("event_log_storage")
    if not (isinstance(storage, dict) and storage.get("class") == EMBEDDED_EVENT_LOG):
        return False
    wanted = run_queue_config(agents)
    queue = ("run_coordinator", "concurrency", "code_servers")
    if any(k in current for k in ("run_coordinator", "run_queue", "concurrency")):
        wanted = {k: v for k, v in wanted.items() if k not in queue}
    added = {k: v for k, v in wanted.items() if k not in current}
    if not added:
        return False
    path.write_text(yaml.safe_dump({**current, **added}, sort_keys=False))
    return True


# The jobs whose steps may leave the run worker (fleet_pipelines.jobs gives them the ``fleet``
# executor): a batch of units, and the integration that merges their pushed branches.
DISTRIBUTED_JOBS = ("fix_", "integrate_")
EXECUTORS = ("in_process", "celery")


def celery_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The Celery settings the executor (in the run worker) and every fleet celery worker share
    (``config_source``): a task is acknowledged only when it has ended, so a batch whose worker
    was killed is delivered again (to another worker) once ``FLEET_CELERY_VISIBILITY_S`` has
    passed — which must exceed the longest batch; one task per worker at a time. An idle worker
    looks for such messages every ``FLEET_CELERY_RESTORE_S`` (default 100 s, kombu's own: a
    scan every 10th of its 10 s ticks), so one is redelivered within visibility + restore."""
    env = os.environ if environ is None else environ
    try:
        visibility = float(env.get("FLEET_CELERY_VISIBILITY_S", "3600"))
    except ValueError as exc:
        raise ConfigError(f"FLEET_CELERY_VISIBILITY_S: {exc}") from exc
    try:
        restore = float(env.get("FLEET_CELERY_RESTORE_S", "100"))
    except ValueError as exc:
        raise ConfigError(f"FLEET_CELERY_RESTORE_S: {exc}") from exc
    if not restore > 0:
        raise ConfigError(f"FLEET_CELERY_RESTORE_S: expected seconds > 0, got {restore}")
    # kombu's redis transport scans on every ``throttle``-th tick of ``interval`` seconds
    transport = {"visibility_timeout": visibility, "unacked_restore_interval": restore,
                 "unacked_restore_throttle": 1}
    return {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": transport,
        "result_backend_transport_options": {"visibility_timeout": visibility},
        # a broker restart: publishing and reading results wait for it instead of failing
        "task_publish_retry_policy": {"max_retries": 60, "interval_start": 0.5,
                                      "interval_step": 0.5, "interval_max": 2},
        "result_backend_always_retry": True,
        "result_backend_max_retries": 60,
        "broker_connection_max_retries": None,
    }


def execution_config(job: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``execution`` run config of a submitted run of ``job``: in the run worker's process
    (``in_process``), or, for a batch or an integration when ``FLEET_EXECUTOR=celery``, on the
    celery workers of the broker ``FLEET_CELERY_BROKER`` (the result backend
    ``FLEET_CELERY_BACKEND``, by default the broker). Broker and backend stay environment
    references in the stored run config: the run worker resolves them, no password is stored."""
    env = os.environ if environ is None else environ
    kind = env.get("FLEET_EXECUTOR", "in_process")
    if kind not in EXECUTORS:
        raise ConfigError(f"FLEET_EXECUTOR: expected {'|'.join(EXECUTORS)}, got {kind!r}")
    if kind == "in_process" or not job.startswith(DISTRIBUTED_JOBS):
        return {"execution": {"config": {"in_process": {}}}}
    if not env.get("FLEET_CELERY_BROKER"):
        raise ConfigError("FLEET_EXECUTOR=celery needs FLEET_CELERY_BROKER (redis://host:6379/0)")
    backend = "FLEET_CELERY_BACKEND" if env.get("FLEET_CELERY_BACKEND") else "FLEET_CELERY_BROKER"
    return {"execution": {"config": {"celery": {
        "broker": {"env": "FLEET_CELERY_BROKER"}, "backend": {"env": backend},
        "config_source": celery_settings(env)}}}}
