"""Runs on Dagster's engine: submitted with the code location's origin, queued by the instance's
run coordinator, launched by its run launcher, followed to their end."""

from fleet_pipelines.engine._checks import OneLineRetries, storage_failure
from fleet_pipelines.engine._code_server import CodeServerProcess
from fleet_pipelines.engine._config import ensure_run_queue, run_queue_config
from fleet_pipelines.engine._daemon import DaemonProcess, SharedDaemon, needs_daemon, serving
from fleet_pipelines.engine._session import Engine, current, submitting
from fleet_pipelines.engine._submit import (
    WORKSPACE,
    SubmitFailed,
    SubmittedRun,
    follow,
    open_workspace,
    submit,
    workspace_file,
)

__all__ = ["WORKSPACE", "CodeServerProcess", "DaemonProcess", "Engine", "OneLineRetries",
           "SharedDaemon", "SubmitFailed", "SubmittedRun", "current", "ensure_run_queue", "follow",
           "needs_daemon", "open_workspace", "run_queue_config", "serving", "storage_failure",
           "submit", "submitting", "workspace_file"]
