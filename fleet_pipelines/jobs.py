"""Jobs, named ``<verb>_<noun>_job``: index the code, and per campaign plan / fix / integrate.

``fix_<c>_job`` runs the partitioned ``candidate_patches`` + ``verified_patches`` of a batch of
units (a partition range); the other jobs are unpartitioned. ``DagsterJobLauncher`` turns a
``/v1/jobs/dispatch`` of the coordinator API into a real run.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from typing import Any

from dagster import (
    AssetsDefinition,
    AssetSelection,
    DagsterInstance,
    Definitions,
    define_asset_job,
)
from dagster._core.definitions.unresolved_asset_job_definition import (
    UnresolvedAssetJobDefinition,
)

from assets import SYMBOL_GRAPH, TARGET_FILES_TAG, CampaignAssets


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
        jobs.append(define_asset_job(
            plan_job_name(c),
            AssetSelection.assets(SYMBOL_GRAPH, c.key("findings"), c.key("work_units")),
            tags=tags, description=f"Find and plan the units of {c.campaign}."))
        jobs.append(define_asset_job(
            fix_job_name(c),
            AssetSelection.assets(c.key("candidate_patches"), c.key("verified_patches")),
            tags=tags,
            description=f"Run a batch of {c.campaign} units: agents, gates, verified patches."))
        jobs.append(define_asset_job(
            integrate_job_name(c),
            AssetSelection.assets(c.key("integration"), c.key("pull_requests")),
            tags=tags, description=f"Integrate the verified {c.campaign} patches and hand over."))
    return jobs


JOB_ID_TAG = "fleet/job_id"


class DagsterJobLauncher:
    """The ``launcher`` of the coordinator API (``fleet.api.create_app(..., launcher=...)``):
    ``POST /v1/jobs/dispatch`` with ``task`` naming a campaign of these definitions becomes a real
    run of ``plan_<c>_job`` on ``instance``, limited to the dispatched ``target_files`` (the
    planner sensor then runs the units). The run executes in a background thread; the launcher
    returns its run id at once. A task that names no campaign is left queued (``None``)."""

    def __init__(self, defs: Definitions, campaigns: Sequence[CampaignAssets],
                 instance: DagsterInstance) -> None:
        self.defs = defs
        self.instance = instance
        self.campaigns = {c.campaign: c for c in campaigns}
        self.threads: list[threading.Thread] = []

    def __call__(self, job_id: str, body: Any) -> str | None:
        campaign = self.campaigns.get(str(body.task))
        if campaign is None:
            return None
        run_id = str(uuid.uuid4())
        job = self.defs.resolve_job_def(plan_job_name(campaign))
        tags = {JOB_ID_TAG: job_id, TARGET_FILES_TAG: ",".join(body.target_files),
                "fleet/campaign": campaign.campaign}

        def execute() -> None:
            job.execute_in_process(instance=self.instance, run_id=run_id, tags=tags,
                                   raise_on_error=False)

        thread = threading.Thread(target=execute, name=f"dispatch-{job_id}", daemon=True)
        thread.start()
        self.threads.append(thread)
        return run_id

    def join(self, timeout: float | None = None) -> None:
        """Wait for every run launched so far."""
        for thread in self.threads:
            thread.join(timeout)
