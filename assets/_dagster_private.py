"""Every name this project takes from Dagster's private modules (``dagster._*``), in one place.

Checked against dagster 1.13.27 (pinned in pyproject.toml with dagster-webserver 1.13.27 and
dagster-postgres 0.29.27). Private modules may change in any release: after a Dagster upgrade,
this module is the one to read again (and the tests named below are the ones that notice).
Nothing else in ``assets`` or ``fleet_pipelines`` imports ``dagster._*``.

Why each is needed (no public equivalent in 1.13):

- ``AssetCheckEvaluationTargetMaterializationData``, ``DagsterEvent``,
  ``DagsterEventBatchMetadata``, ``DagsterEventType``, ``generate_event_batch_id``: a batched
  ``candidate_patches`` step logs one check evaluation per unit *partition* and
  ``verified_patches`` one materialization per verified unit, each unit's events as one event
  batch (``assets/_batch.py``). A step may yield a check result once; these events carry the
  per-partition verdicts (tests/pipelines/test_pipeline_chain.py, test_pooled_event_log_storage).
- ``UnresolvedAssetJobDefinition``: the type ``define_asset_job`` returns, which the sensors and
  the dispatcher annotate (fleet_pipelines/jobs.py, sensors.py).
- ``ASSET_PARTITION_RANGE_START_TAG`` / ``_END_TAG``: the run tags that make a run cover a
  partition range (one run per batch of units: sensors.py, commands/_sweep.py).
- ``ASSET_CHECK_EVENTS``, ``ASSET_EVENTS``, ``EventLogEntry``, ``INDEX_SHARD_NAME``,
  ``SqliteEventLogStorage``, ``create_engine``, ``SQLITE_BUSY_TIMEOUT_SECONDS``,
  ``ConfigurableClassData``: the pooled SQLite event log storage that writes an event batch in
  one transaction (fleet_pipelines/storage.py, tests/pipelines/test_pooled_event_log_storage.py).
- ``JobSubsetSelector``, ``CodeLocation``, ``WorkspaceProcessContext``,
  ``WorkspaceRequestContext``, ``WorkspaceFileTarget``: submitting a run to the instance's run
  queue from the command line, as the webserver does, and ``merge_dicts`` for its run config
  (fleet_pipelines/engine/).
- ``WILL_RETRY_TAG``, ``AUTO_RETRY_RUN_ID_TAG``, ``RUN_FAILURE_REASON_TAG``, ``MAX_RETRIES_TAG``:
  a submitted run the instance retries (``run_retries``: its start timed out, its run worker
  died) is followed into its retry; a run executed in process is never retried
  (fleet_pipelines/engine/_submit.py, commands/_sweep.py; tests/engine/test_run_retries.py).
- ``ExecuteStepArgs``, ``pack_value``, ``unpack_value``: a fleet celery worker reads the step
  keys of the dagster-celery task it is about to run, to skip the mirror sync and the index for a
  step that reads neither, and the run worker applies such a step's task locally
  (fleet_pipelines/engine/_prepare.py, executor.py; tests/distributed/test_worker_prepare.py,
  test_deployment.py).
- ``retry_failed_run`` (the daemon's own ``retry_run``): a failed run the instance decided to
  retry (``dagster/will_retry`` true) whose retry the daemon never made is retried by the
  process following it, exactly as the daemon would (idempotent: it finds a retry already made).
  The daemon misses one when its event log consumer reads the failure event before the run's
  status is written (``handle_new_event`` stores the event first): it then sees a run still
  STARTING, judges it not to retry, and its cursor moves past the event
  (fleet_pipelines/engine/_submit.py; tests/engine/test_run_retries.py). Imported on first call.
- ``submit_celery_task`` (dagster-celery's private ``executor._submit_task``, checked against
  dagster-celery 0.29.27): the fleet celery executor submits a step that reads the worker's
  mirror as dagster-celery does (fleet_pipelines/engine/executor.py; test_deployment.py).
  Imported on first call: dagster-celery imports celery, which no other process needs.
- ``CheckRunHealthResult``, ``WorkerStatus``, ``InstanceRef``, ``capture_interrupts``,
  ``get_run_crash_explanation`` and ``execute_run_body`` (``dagster._cli.api``'s
  ``_execute_run_command_body``, what ``dagster api execute_run`` does with a run): the forking
  run launcher runs a run worker in a child of a warm process, reports the health of its run
  workers to the daemon's run monitoring and a crashed one as Dagster's code server does
  (fleet_pipelines/engine/run_launcher.py; tests/engine/test_forking_launcher.py).
- ``dagster_alembic_config`` (``dagster._core.storage.sql.get_alembic_config`` as the SQLite
  run storage calls it): the alembic config of Dagster's storage migrations, whose script
  directory the fork server and the celery workers load once; ``STORAGE_MODULES``, the modules
  of Dagster's SQLite storage and in-process executor that a run worker would import itself
  (fleet_pipelines/engine/_preload.py; tests/engine/test_preload.py). Imported on first call.
- ``LocalComputeLogManager``, ``CapturedLogContext``, ``ComputeIOType``, ``IO_TYPE_EXTENSION``,
  ``redirect_to_file``, ``ensure_file``, ``touch_file``: the local compute-log manager's capture
  with its mirror as a thread instead of ``tail`` processes, the same files and marker
  (fleet_pipelines/compute_logs.py; tests/pipelines/test_compute_logs.py).
- ``route_grpc_servers`` (``dagster._grpc.server.get_python_environment_entry_point``, the name
  ``open_server_process`` builds a code server's command from): the gRPC servers fleet's
  processes start go through ``fleet_pipelines._dagster_entry`` (tests/engine/
  test_code_server_entry.py). Imported on first call.
"""

from collections.abc import Callable, Sequence

from alembic.config import Config as AlembicConfig
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.definitions.unresolved_asset_job_definition import (
    UnresolvedAssetJobDefinition,
)
from dagster._core.events import (
    ASSET_CHECK_EVENTS,
    ASSET_EVENTS,
    DagsterEvent,
    DagsterEventBatchMetadata,
    DagsterEventType,
    generate_event_batch_id,
)
from dagster._core.events.log import EventLogEntry
from dagster._core.execution.compute_logs import redirect_to_file
from dagster._core.instance.ref import InstanceRef
from dagster._core.launcher.base import CheckRunHealthResult, WorkerStatus
from dagster._core.remote_representation.code_location import CodeLocation
from dagster._core.storage.compute_log_manager import CapturedLogContext, ComputeIOType
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SqliteEventLogStorage,
)
from dagster._core.storage.local_compute_log_manager import (
    IO_TYPE_EXTENSION,
    LocalComputeLogManager,
)
from dagster._core.storage.sql import create_engine
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
    AUTO_RETRY_RUN_ID_TAG,
    MAX_RETRIES_TAG,
    RUN_FAILURE_REASON_TAG,
    WILL_RETRY_TAG,
)
from dagster._core.workspace.context import WorkspaceProcessContext, WorkspaceRequestContext
from dagster._core.workspace.load_target import WorkspaceFileTarget
from dagster._grpc.types import ExecuteStepArgs
from dagster._serdes import ConfigurableClassData, pack_value, unpack_value
from dagster._utils import ensure_file, get_run_crash_explanation, touch_file
from dagster._utils.interrupts import capture_interrupts
from dagster._utils.merger import merge_dicts

DAGSTER_VERSION_CHECKED = "1.13.27"


def route_grpc_servers(entry_point: Callable[[str], Sequence[str]]) -> None:
    """The command of every gRPC code server this process starts begins with
    ``entry_point(python)`` instead of ``[python, "-m", "dagster"]``."""
    import dagster._grpc.server as server

    server.get_python_environment_entry_point = entry_point  # type: ignore[assignment]


def retry_failed_run(run: object, process: object) -> None:
    """``dagster._daemon.auto_run_reexecution.auto_run_reexecution.retry_run(run, context)``:
    the retry of the failed ``run`` created and submitted as the daemon does (nothing when one
    was made already)."""
    from dagster._daemon.auto_run_reexecution.auto_run_reexecution import retry_run

    retry_run(run, process)  # type: ignore[arg-type]


def execute_run_body(run_id: str, instance: object) -> int:
    """``dagster._cli.api._execute_run_command_body``: the run ``run_id`` executed in this
    process from its code origin, as ``dagster api execute_run`` does (its cancellation and
    metrics threads included); its events go to the instance only. 0 unless it raised before
    the run could be reported."""
    from dagster._cli.api import _execute_run_command_body

    return _execute_run_command_body(run_id, instance, lambda _event: None,  # type: ignore[arg-type]
                                     set_exit_code_on_failure=False)


STORAGE_MODULES = (
    "dagster._core.storage.runs.sqlite.sqlite_run_storage",
    "dagster._core.storage.event_log.sqlite.sqlite_event_log",
    "dagster._core.storage.schedules.sqlite.sqlite_schedule_storage",
    "dagster._core.storage.local_compute_log_manager", "dagster._core.storage.sqlite_storage",
    "dagster._core.executor.in_process", "dagster._core.workspace.autodiscovery",
)


def dagster_alembic_config() -> AlembicConfig:
    """The alembic ``Config`` of Dagster's storage migrations (one script location for every
    storage), as ``SqliteRunStorage`` builds it to check its schema's revision."""
    from dagster._core.storage.runs.sqlite import sqlite_run_storage
    from dagster._core.storage.sql import get_alembic_config

    return get_alembic_config(sqlite_run_storage.__file__)


def submit_celery_task(*args: object) -> object:
    """``dagster_celery.executor._submit_task(app, plan_context, step, queue, priority,
    known_state)``: the step's task sent to the broker (an ``AsyncResult``)."""
    from dagster_celery.executor import _submit_task

    return _submit_task(*args)

__all__ = [
    "ASSET_CHECK_EVENTS",
    "ASSET_EVENTS",
    "ASSET_PARTITION_RANGE_END_TAG",
    "ASSET_PARTITION_RANGE_START_TAG",
    "AUTO_RETRY_RUN_ID_TAG",
    "DAGSTER_VERSION_CHECKED",
    "INDEX_SHARD_NAME",
    "IO_TYPE_EXTENSION",
    "MAX_RETRIES_TAG",
    "RUN_FAILURE_REASON_TAG",
    "SQLITE_BUSY_TIMEOUT_SECONDS",
    "STORAGE_MODULES",
    "WILL_RETRY_TAG",
    "AssetCheckEvaluationTargetMaterializationData",
    "CapturedLogContext",
    "CheckRunHealthResult",
    "CodeLocation",
    "ComputeIOType",
    "ConfigurableClassData",
    "DagsterEvent",
    "DagsterEventBatchMetadata",
    "DagsterEventType",
    "EventLogEntry",
    "ExecuteStepArgs",
    "InstanceRef",
    "JobSubsetSelector",
    "LocalComputeLogManager",
    "SqliteEventLogStorage",
    "UnresolvedAssetJobDefinition",
    "WorkerStatus",
    "WorkspaceFileTarget",
    "WorkspaceProcessContext",
    "WorkspaceRequestContext",
    "capture_interrupts",
    "create_engine",
    "dagster_alembic_config",
    "ensure_file",
    "execute_run_body",
    "generate_event_batch_id",
    "get_run_crash_explanation",
    "merge_dicts",
    "pack_value",
    "redirect_to_file",
    "retry_failed_run",
    "route_grpc_servers",
    "submit_celery_task",
    "touch_file",
    "unpack_value",
]
