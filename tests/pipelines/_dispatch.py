"""The set-up the coordinator-API dispatch tests share: a yaml-safe-load campaign on a repository
whose symbol graph is already materialized, and the ``DagsterJobLauncher`` dispatch uses."""

from __future__ import annotations

from pathlib import Path

from dagster import DagsterInstance

from assets import SYMBOL_GRAPH
from fleet_pipelines.definitions import build_campaigns, build_definitions
from fleet_pipelines.jobs import DagsterJobLauncher
from fleet_pipelines.resources import FleetSettings

__all__ = ["indexed_launcher"]


def indexed_launcher(tmp_path: Path, repo: Path,
                     instance: DagsterInstance) -> tuple[FleetSettings, DagsterJobLauncher]:
    """The settings (FLEET_HOME under ``tmp_path``) and a launcher on ``instance``, after the
    index job materialized ``repo``'s symbol graph."""
    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "fleet"),
                                       "FLEET_REPO": str(repo),
                                       "FLEET_CAMPAIGNS": "yaml-safe-load"})
    defs = build_definitions(settings)
    defs.resolve_job_def("index_code_job").execute_in_process(
        instance=instance, asset_selection=[SYMBOL_GRAPH])
    return settings, DagsterJobLauncher(defs, build_campaigns(settings), instance)
