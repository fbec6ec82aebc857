"""Jobs, named ``<verb>_<noun>_job``: index the code, and per campaign plan / fix / integrate.

``fix_<c>_job`` runs the partitioned ``candidate_patches`` + ``verified_patches`` of a batch of
units (a partition range); the other jobs are unpartitioned.
"""

from __future__ import annotations

from collections.abc import Sequence

from dagster import AssetsDefinition, AssetSelection, define_asset_job
from dagster._core.definitions.unresolved_asset_job_definition import (
    UnresolvedAssetJobDefinition,
)

from assets import SYMBOL_GRAPH, CampaignAssets


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
