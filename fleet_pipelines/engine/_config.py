"""The run queue of every ``dagster.yaml`` fleet writes: a ``QueuedRunCoordinator``, limits per
campaign (the ``fleet/campaign`` tag every fleet job carries) and the ``agent_sandbox`` pool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CAMPAIGN_TAG = "fleet/campaign"
EMBEDDED_EVENT_LOG = "PooledSqliteEventLogStorage"  # fleet_pipelines.storage


def run_queue_config(agents: int = 2, runs_per_campaign: int = 4,
                     max_runs: int = 8) -> dict[str, Any]:
    """The ``run_coordinator``, ``concurrency`` and ``code_servers`` sections: at most
    ``max_runs`` runs in progress, ``runs_per_campaign`` of one campaign, ``agents`` steps of
    the ``agent_sandbox`` pool (every unpooled pool too) at once. The queue is read every
    second: a sweep waits for each run it submits. A sweep's own code server is waited for
    when the sweep closes its workspace (else its process outlives the ``Popen`` that started
    it)."""
    return {
        "code_servers": {"wait_for_local_processes_on_shutdown": True},
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
    event log is fleet's pooled SQLite storage) unless it already configures a run coordinator,
    a run queue or concurrency; a deployment's own file is never touched. True if written."""
    path = dagster_home / "dagster.yaml"
    if not path.is_file():
        return False
    loaded = yaml.safe_load(path.read_text())
    current = loaded if isinstance(loaded, dict) else {}
    storage = current.get("event_log_storage")
    embedded = isinstance(storage, dict) and storage.get("class") == EMBEDDED_EVENT_LOG
    if not embedded or any(k in current for k in ("run_coordinator", "run_queue", "concurrency")):
        return False
    path.write_text(yaml.safe_dump({**current, **run_queue_config(agents)}, sort_keys=False))
    return True
